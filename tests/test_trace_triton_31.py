"""``trace_triton`` under Triton 3.1 (PyTorch 2.5): its ``ASTSource`` takes
the signature and the constants by name and an ``AttrsDescriptor`` of positions from
``triton.compiler.compiler`` (3.2 moved it, with ``from_hints``, to ``triton.backends``; 3.3
dropped it), as 3.1's JIT builds them. The compile is a stand-in of ours that keeps the source
it is given; a real Triton 3.1 wheel compiled and traced through this path outside the project
(its softmax and matmul entries gave the counts of the same entries traced from the cache)."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.triton.compile import compile_entry


@dataclass
class _Attrs:  # Triton 3.1's AttrsDescriptor: positions in the def
    divisible_by_16: tuple[int, ...] = ()
    equal_to_1: tuple[int, ...] = ()


@dataclass
class _Source:
    fn: Any
    signature: dict[str, str]
    constants: dict[str, Any] = field(default_factory=dict)
    attrs: Any = None


class _Kept(Exception):
    pass


def _kernel(out_ptr, in_ptr, stride, n, BLOCK):  # noqa: ANN001, N803 (a def as Triton reads it)
    pass


_kernel.arg_names = ["out_ptr", "in_ptr", "stride", "n", "BLOCK"]  # type: ignore[attr-defined]


@pytest.fixture
def triton31(monkeypatch: pytest.MonkeyPatch) -> list[_Source]:
    """``triton`` modules shaped as 3.1's; the sources compiled are kept in the list."""
    kept: list[_Source] = []

    def compile(source: _Source, target: Any, options: Any) -> None:  # noqa: A001
        kept.append(source)
        raise _Kept

    triton = types.ModuleType("triton")
    triton.compile = compile  # type: ignore[attr-defined]
    backends = types.ModuleType("triton.backends")
    backend_compiler = types.ModuleType("triton.backends.compiler")
    backend_compiler.GPUTarget = lambda *a: a  # type: ignore[attr-defined]
    front = types.ModuleType("triton.compiler")
    front.ASTSource = _Source  # type: ignore[attr-defined]
    front_compiler = types.ModuleType("triton.compiler.compiler")
    front_compiler.AttrsDescriptor = _Attrs  # type: ignore[attr-defined]
    front.compiler = front_compiler  # type: ignore[attr-defined]
    backends.compiler = backend_compiler  # type: ignore[attr-defined]
    triton.backends = backends  # type: ignore[attr-defined]
    for name, module in {
        "triton": triton,
        "triton.backends": backends,
        "triton.backends.compiler": backend_compiler,
        "triton.compiler": front,
        "triton.compiler.compiler": front_compiler,
    }.items():
        monkeypatch.setitem(sys.modules, name, module)
    return kept


def test_a_31_compile_gets_names_and_a_descriptor_of_positions(
    triton31: list[_Source], tmp_path: Path
) -> None:
    signature = {"out_ptr": "*fp32", "in_ptr": "*fp32", "stride": "i32", "n": "i32"}
    with pytest.raises(ShmemError):  # the stand-in stops the compile once it has the source
        compile_entry(
            _kernel, signature, {"BLOCK": 1024}, tmp_path, num_warps=4, num_stages=3,
            arch=90, attrs={(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]]},
            ones={"stride"},
        )  # fmt: skip
    (source,) = triton31
    # as 3.1's JIT: every parameter that is no constexpr in the signature, by name (a unit
    # stride too), the constexprs and the unit stride among the constants
    assert source.signature == signature
    assert source.constants == {"BLOCK": 1024, "stride": 1}
    assert source.attrs == _Attrs(divisible_by_16=(0, 1), equal_to_1=(2,))
