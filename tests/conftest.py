"""What the test modules share: where the test data lives and the markers that skip a
test when a tool it needs is missing. Defined here once; modules import them
(``from .conftest import TRACE_DATA, needs_nvdisasm``). And what a session sets up once
for all of them (:func:`pytest_configure`)."""

from __future__ import annotations

import compileall
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from shmem_cli.cuda import toolchain

from .cexpr import GXX

#: an exception shmem does not expect is raised whole in every test and every process a test
#: starts, never said in one line (shmem_cli.cli.TRACEBACK_VARIABLE): a bug must show
os.environ["SHMEM_TRACEBACK"] = "1"

#: the repository's root
ROOT = Path(__file__).resolve().parents[1]
#: the project's measured data, fixtures and kernels (tests/data/README.md)
TEST_DATA = ROOT / "tests" / "data"
#: the trace front end's cubins, kernels and measured launches (tests/data/trace/README.md)
TRACE_DATA = TEST_DATA / "trace"
#: a liveness guard, not a speed target (those live in ``make bench``, bench/run.py): the
#: seconds a bounded call may take before a test calls it hung. The regressions it guards ran
#: for minutes to hours; a loaded CI machine must never trip it. Where the bound can be
#: proved (a reader never called, calls or bytes counted), a test proves it instead.
HANG_S = 30.0

#: the session's nvdisasm cache (tests/tool_cache.py), made and removed by the controller
_TOOL_CACHE: list[Path] = []

__all__ = [
    "HANG_S",
    "ROOT",
    "TEST_DATA",
    "TRACE_DATA",
    "module_from_file",
    "needs_gxx",
    "needs_nvcc",
    "needs_nvdisasm",
]

#: needs NVIDIA's disassembler (the ``cuda`` extra: ``pip install 'shmem[cuda]'``)
needs_nvdisasm = pytest.mark.skipif(
    toolchain.which("nvdisasm") is None, reason="nvdisasm not found (pip install 'shmem[cuda]')"
)
#: needs nvcc, found as shmem itself finds it (PATH, CUDA_HOME)
needs_nvcc = pytest.mark.skipif(toolchain.which("nvcc") is None, reason="nvcc is not installed")
#: needs a host C++ compiler (the C reference of the expression language)
needs_gxx = pytest.mark.skipif(GXX is None, reason="needs g++")


def module_from_file(name: str, path: Path, *, register: bool = False) -> ModuleType:
    """The Python file ``path`` (a lab's script, a docs tool: no package) imported as module
    ``name``; ``register`` puts it in ``sys.modules`` first (for a module whose dataclasses
    look themselves up there)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def tool_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the tools shmem runs during the test (``toolchain.run``), in order: a
    test asks how often one ran (``tool_runs.count("nvdisasm")``)."""
    ran: list[str] = []
    real = toolchain.run

    def counted(args: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        ran.append(Path(args[0]).name)
        return real(args, **kw)

    monkeypatch.setattr(toolchain, "run", counted)
    return ran


_PARAMETER_SET = type(pytest.param(None))  # what pytest.param makes


def fast_few(cases: Iterable[Any], *, keep: int = 2, tuples: bool = False) -> list[Any]:
    """A parametrized check over a lab's many launches, its first ``keep`` cases in ``make
    test`` and the others marked ``slow`` (the slow run, which CI runs too, checks them all):
    every commit still traces some launches of each lab. ``tuples``: each case is the tuple
    of several argument names."""
    out: list[Any] = []
    for i, case in enumerate(cases):
        if i < keep:
            out.append(case)
        elif isinstance(case, _PARAMETER_SET):
            marks = (*case.marks, pytest.mark.slow)
            out.append(pytest.param(*case.values, marks=marks, id=case.id))
        else:
            out.append(pytest.param(*(case if tuples else (case,)), marks=pytest.mark.slow))
    return out


def pytest_configure(config: pytest.Config) -> None:
    """Once a session, in the controller (before the xdist workers start, so that they and
    every process they start inherit it): shmem's modules compiled to bytecode, and a cache
    of nvdisasm's output first on PATH."""
    if hasattr(config, "workerinput"):
        return
    # Every `shmem` process a test starts imports shmem_cli; where PYTHONDONTWRITEBYTECODE is
    # set (this checkout sets it) each would compile its ~200 modules (0.3 s), as an
    # installed package never does. Compiled here once, as bench/run.py does.
    compileall.compile_dir(str(ROOT / "shmem_cli"), quiet=1)
    real = toolchain.which("nvdisasm")
    if real is None:
        return
    folder = Path(tempfile.mkdtemp(prefix="shmem-test-nvdisasm-"))
    _TOOL_CACHE.append(folder)
    (folder / "bin").mkdir()
    (folder / "kept").mkdir()
    shim = folder / "bin" / "nvdisasm"
    program = [sys.executable, "-IS", str(ROOT / "tests" / "tool_cache.py"), real]
    shim.write_text(f'#!/bin/sh\nexec {shlex.join([*program, str(folder / "kept")])} "$@"\n')
    shim.chmod(0o755)
    os.environ["PATH"] = f"{folder / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _TOOL_CACHE:
        shutil.rmtree(folder, ignore_errors=True)
    _TOOL_CACHE.clear()


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The architecture of every nvcc compile shmem runs during the test, in order (spied on
    ``toolchain.compile_cu``)."""
    made: list[str] = []
    real = toolchain.compile_cu

    def spy(source: Path, arch: str, *args: Any, **kwargs: Any) -> Path:
        made.append(arch)
        return real(source, arch, *args, **kwargs)

    monkeypatch.setattr(toolchain, "compile_cu", spy)
    return made
