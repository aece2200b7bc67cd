"""The element reductions of TMA reduction copies (``UTMAREDG``), on values worked out by
hand from PTX's definitions (the H200's own run is tests/test_trace_opcodes.py's
``async_more``: an int32 add)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shmem_cli.cuda.sass import Instruction
from shmem_cli.trace.emulator.memory_bytes import element_reduction
from shmem_cli.trace.emulator.op_table import TraceError


def _ins(text: str) -> Instruction:
    op, *mods = text.split(".")
    return Instruction(0, None, op, tuple(mods), (), None, None, text)


def _run(how: str, dtype: str, old: list[Any], new: list[Any], t: Any) -> list[Any]:
    a = np.array(old, dtype=t)
    b = np.array(new, dtype=t)
    combine = element_reduction(how, dtype, _ins(f"UTMAREDG.2D.{how}"))
    out = combine(a.view(np.uint8).reshape(len(a), -1), b.view(np.uint8).reshape(len(b), -1))
    return list(np.asarray(out, dtype=np.uint8).ravel().view(t))


def test_integer_reductions() -> None:
    assert _run("ADD", "int32", [2**31 - 1, -5], [1, 3], np.int32) == [-(2**31), -2]
    assert _run("MIN", "int32", [-1, 7], [1, 3], np.int32) == [-1, 3]
    assert _run("MAX", "uint32", [0xFFFFFFFF, 7], [1, 9], np.uint32) == [0xFFFFFFFF, 9]
    assert _run("XOR", "uint64", [0b1100], [0b1010], np.uint64) == [0b0110]
    # inc: old >= new wraps to 0, else old + 1; dec: old 0 or above new gives new, else old - 1
    assert _run("INC", "uint32", [5, 4, 9], [5, 5, 5], np.uint32) == [0, 5, 0]
    assert _run("DEC", "uint32", [0, 9, 3], [5, 5, 5], np.uint32) == [5, 5, 2]


def test_float_reductions() -> None:
    assert _run("ADD", "float32", [1.5, np.inf], [2.25, 1.0], np.float32) == [3.75, np.inf]
    assert _run("MIN", "float16", [np.nan, 2.0], [1.0, -3.0], np.float16) == [1.0, -3.0]
    # bfloat16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7: to even, 1.0 (0x3f80)
    one, eighth = 0x3F80, 0x3B80  # 1.0 and 2^-8
    assert _run("ADD", "bfloat16", [one], [eighth], np.uint16) == [0x3F80]
    # 1 + 3 * 2^-8 is past the half-way point to 1 + 2^-6: 0x3f82
    assert _run("ADD", "bfloat16", [one], [0x3C40], np.uint16) == [0x3F82]


def test_reductions_ptx_lacks_are_refused() -> None:
    with pytest.raises(TraceError):
        element_reduction("INC", "int64", _ins("UTMAREDG.2D.INC"))
    with pytest.raises(TraceError):
        element_reduction("XOR", "float32", _ins("UTMAREDG.2D.XOR"))
