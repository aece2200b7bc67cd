"""When ``shmem trace KERNEL.cu`` builds for sm_90a too (cuda/build.py): only where the sm_90
build traps or prints, a file it read names a macro that -arch=sm_90a defines, and the sm_90a
build's preprocessing, run alone, gives another text than the sm_90 build compiled. A
toolkit header that names the macro only in a test for other architectures (cuda_fp8.h, for
sm_100 on) cost every plain kernel with an ``assert`` a second nvcc build."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import build, toolchain

from .conftest import TRACE_DATA, needs_nvcc

PROBE = TRACE_DATA / "sm90a_probe"


def _traced(source: Path, *args: str) -> dict[str, object]:
    res = CliRunner().invoke(main, ["trace", str(source), *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    kernel: dict[str, object] = json.loads(res.output)["files"][0]["kernels"][0]
    return kernel


@pytest.mark.slow
@needs_nvcc
def test_a_header_that_names_the_macro_for_other_architectures_costs_no_second_build(
    compiles: list[str], tool_runs: list[str]
) -> None:
    k = _traced(PROBE / "fp8_assert.cu", "-b", "256", "--arg", "n=256")
    assert (k["target"], k["arch_note"]) == ("sm_90", None)
    assert compiles == ["sm_90"]  # was ["sm_90", "sm_90a"]
    assert tool_runs.count("nvdisasm") == 1, tool_runs
    # what made it look: the header names the macro, in a test that selects nothing on sm_90
    header = next(f for f in _read(PROBE / "fp8_assert.cu") if f.endswith("/cuda_fp8.h"))
    assert build.names_a_feature([header], "sm_90")


@pytest.mark.slow
@needs_nvcc
def test_code_only_the_sm90a_build_has_still_gets_it(compiles: list[str]) -> None:
    k = _traced(PROBE / "fp8_bulk.cu", "-b", "128")
    assert compiles == ["sm_90", "sm_90a"]
    assert (k["arch"], k["target"]) == ("sm_90", "sm_90a")
    assert k["arch_note"] == (
        "compiled for sm_90a: the sm_90 build traps where the sm_90a one runs wgmma/TMA "
        "(give --arch sm_90 to trace the sm_90 build)"
    )


def _read(source: Path) -> list[str]:
    """The files the sm_90 build of ``source`` read (cuda/build.py's own list)."""
    with tempfile.TemporaryDirectory() as tmp:
        toolchain.compile_cu(source, "sm_90", Path(tmp), keep=True)
        return build.read_files(Path(tmp))
