"""Taint by byte (emulator/ops/byte_taint.py): a bool ptxas keeps in the low byte of a
register whose upper bytes still hold global data decides nothing by that data, so the blocks
stay alike; wherever the bytes a decision reads do carry the data, the blocks still differ.

Each kernel is hand-written SASS on :data:`.test_trace_datapaths.DATA_WORD` (R3: the block's
word of ``a``, global data), ending in a branch on P1 around one store of the warp's shared
words: a block stores where P1 is false. The counts are by hand."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.ops.bits import lut3
from shmem_cli.trace.emulator.ops.byte_taint import lop3_taint

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_datapaths import DATA_WORD, words_launch
from .test_trace_grid import every_block, traced
from .test_trace_measured import cubin
from .trace_util import numbered

_BYTES = np.array([0xFF << (8 * k) for k in range(4)], dtype=np.uint32)
#: the tail every kernel ends in: a block whose P1 is false stores once (one warp, one request)
_TAIL = """@P1 BRA `(.L_skip)
STS [R2], R0
.L_skip:
EXIT"""


def _stores(body: str, words: list[int]) -> list[tuple[int, int, str]]:
    """Per run (alike proof, then every block): the stores counted, the blocks run, the mode."""
    function = numbered(DATA_WORD + body + "\n" + _TAIL)
    out = []
    for every in (False, True):
        tr = execute.run(function, words_launch(words), grid=True, every_block=every)
        assert tr.coverage is not None
        (n,) = [r.n for r in tr.records if r.instruction.opcode == "STS"] or [0]
        n *= tr.coverage.weight  # (alike: one block's records stand for every block's)
        out.append((n, tr.coverage.run, tr.coverage.mode))
    return out


#: the bool pattern: R4 = R3 (global data), its low half set from RZ, then the low byte tested
_LOW_BOOL = """IMAD.MOV.U32 R4, RZ, RZ, R3
PRMT R4, RZ, 0x7610, R4
LOP3.LUT P1, RZ, R4, 0xff, RZ, 0xc0, !PT"""

#: the same through the uniform datapath
_LOW_BOOL_UNIFORM = """R2UR UR4, R3
UPRMT UR5, URZ, 0x7610, UR4
ULOP3.LUT UR6, UR5, 0xff, URZ, 0xc0, !UPT
ISETP.NE.AND P1, PT, RZ, UR6, PT"""

#: a set bit the data cannot clear decides the predicate alone: ``(a | 1) != 0``, then
#: P1 its negation
_KNOWN_ONE = """LOP3.LUT P1, RZ, R3, 0x1, RZ, 0xfc, !PT
PLOP3.LUT P1, PT, P1, PT, PT, 0xf, 0x0"""


@pytest.mark.parametrize("body", [_LOW_BOOL, _LOW_BOOL_UNIFORM, _KNOWN_ONE])
def test_a_bool_in_bytes_the_data_never_reached_leaves_the_blocks_alike(body: str) -> None:
    """P1 reads only bytes that hold no global data (or a bit the data cannot change): one
    block runs for all four, every one stores, as when every block runs."""
    words = [0x1234_5601, 0, -1, 7]
    proof, every = _stores(body, words)
    assert proof == (4, 1, "alike")  # by hand: every block's P1 is false, one block stands
    assert every == (4, 4, "whole")


#: the data's low half kept in the low bytes: P1 tests data
_SELECTED = """PRMT R4, R3, 0x7610, RZ
LOP3.LUT P1, RZ, R4, 0xff, RZ, 0xc0, !PT"""
#: the data in the high half, the mask covering byte 2
_MASK_COVERS = """PRMT R4, RZ, 0x7610, R3
LOP3.LUT P1, RZ, R4, 0xff00ff, RZ, 0xc0, !PT"""
#: the record of clean low bytes, then a whole write of the data: the low byte is data again
_REWRITTEN = """PRMT R4, RZ, 0x7610, R3
IMAD.MOV.U32 R4, RZ, RZ, R3
LOP3.LUT P1, RZ, R4, 0xff, RZ, 0xc0, !PT"""
#: both sources tainted: the low half of one, the high half of the other
_BOTH_TAINTED = """IADD3 R5, R3, 0x10000, RZ
PRMT R4, R3, 0x3254, R5
LOP3.LUT P1, RZ, R4, 0xff00, RZ, 0xc0, !PT"""
#: a nibble that replicates the sign of the data's byte 0 into a clean-looking byte
_SIGN = """PRMT R4, R3, 0x4448, RZ
LOP3.LUT P1, RZ, R4, 0xff, RZ, 0xc0, !PT"""
#: the uniform datapath: the data's low half kept
_SELECTED_UNIFORM = """R2UR UR4, R3
UPRMT UR5, UR4, 0x7610, URZ
ULOP3.LUT UR6, UR5, 0xff, URZ, 0xc0, !UPT
ISETP.NE.AND P1, PT, RZ, UR6, PT"""
#: a selector on the data picking between untainted bytes
_SELECTOR = """IMAD.MOV.U32 R6, RZ, RZ, 0x1010101
PRMT R4, RZ, R3, R6
LOP3.LUT P1, RZ, R4, 0xff, RZ, 0xc0, !PT"""
#: a LOP3 of two registers: the clean low bytes of R4 ORed with the data's
_TWO_REGISTERS = """PRMT R4, RZ, 0x7610, R3
LOP3.LUT R6, R4, R3, RZ, 0xfc, !PT
LOP3.LUT P1, RZ, R6, 0xff, RZ, 0xc0, !PT"""


@pytest.mark.parametrize(
    ("body", "word"),
    [
        (_SELECTED, 0x1),
        (_MASK_COVERS, 0x1_0000),
        (_REWRITTEN, 0x1),
        (_BOTH_TAINTED, 0x100),
        (_SIGN, 0x80),
        (_SELECTED_UNIFORM, 0x1),
        (_TWO_REGISTERS, 0x1),
        (_SELECTOR, 0x4),
    ],
)
def test_a_decision_on_bytes_that_hold_the_data_still_differs(body: str, word: int) -> None:
    """Block 0's word sets a bit P1 reads (through the bytes PRMT selected, a mask over a
    tainted byte, a register written whole after its record, either source of a PRMT, a sign
    replicated, a uniform PRMT, an OR of two registers, a selector on the data); the other
    blocks' word is 0: block 0 alone skips its store, and the proof must not let one block
    stand for the others."""
    proof, every = _stores(body, [word, 0, 0, 0])
    assert proof[0] == every[0] == 3  # by hand: blocks 1-3 store once each
    assert every[1:] == (4, "whole")


LOWBOOL = TRACE_DATA / "lowbool" / "low_bool.sm_90.cubin"


@needs_nvdisasm
def test_the_project_kernel_whose_flag_ptxas_keeps_below_global_data_is_alike(
    tmp_path: Path,
) -> None:
    """tests/data/trace/lowbool: nvcc keeps the tile loop's 16-bit flag in the low half of
    a register that held a word of ``data`` (``@P0 PRMT R11, RZ, 0x7610, R11``, then
    ``LOP3.LUT P0, RZ, R11, 0xff, RZ, 0xc0, !PT``: the loop's exit). Every byte of the words
    differs between blocks, yet the exit does not: one block stands for the 64, with the
    totals of every block run."""
    _, disassembly = cubin(LOWBOOL)
    assert re.search(r"PRMT (R\d+), RZ, 0x7610, \1 ", disassembly)
    assert re.search(r"LOP3\.LUT P0, RZ, R\d+, 0xff, RZ, 0xc0, !PT", disassembly)
    data = tmp_path / "data.bin"
    data.write_bytes((np.arange(64 * 256, dtype=np.uint32) * np.uint32(0x01010101)).tobytes())
    args = (f"0=@{data}", "2=1")  # one tile
    alike = traced(LOWBOOL, "low_bool", 256, (64, 1, 1), args)
    ran = every_block(LOWBOOL, "low_bool", 256, (64, 1, 1), args)
    cov, whole = alike.launch.coverage, ran.launch.coverage
    assert cov is not None and (cov.mode, cov.run, cov.blocks) == ("alike", 1, 64)
    assert whole is not None and whole.mode == "whole"
    assert alike.totals == ran.totals
    # by hand: each block's 8 warps store their tile's words and load them back once, one
    # wavefront each (the load's words 33 t % 256 fall in 32 banks)
    for op in ("store", "load"):
        assert alike.totals[op].requests == alike.totals[op].wavefronts == 64 * 8
    assert not any(a.data_from for a in alike.accesses)


@pytest.mark.parametrize("whole", [False, True])
def test_what_lop3_leaves_untainted_does_not_change_with_the_tainted_bytes(whole: bool) -> None:
    """For random truth tables, inputs and tainted bytes (or whole registers, ``whole``):
    wherever lop3_taint leaves the result (or its predicate) untainted, every other content
    of the tainted bytes gives the same result (or predicate)."""
    rng = np.random.default_rng(7)
    n = 512
    for _ in range(40):
        lut = int(rng.integers(0, 256))
        values = [rng.integers(0, 2**32, n, dtype=np.uint32) for _ in range(3)]
        # per input and byte (or register, the same in its 4 bytes): tainted or not
        odds = rng.choice([0.0, 0.2, 0.7, 1.0], size=(3, 1, 1))
        tainted = rng.random((3, 1 if whole else 4, n)) < odds
        tainted = np.broadcast_to(tainted, (3, 4, n))
        by_byte = [np.where(tainted[k], np.uint8(1), np.uint8(0)) for k in range(3)]
        taints = [b[0] | b[1] | b[2] | b[3] for b in by_byte]
        given = [None] * 3 if whole else by_byte
        tr, tp = lop3_taint(partial(lut3, lut), values, taints, given, n)
        masks = [
            np.bitwise_or.reduce(
                np.where(tainted[k], _BYTES[:, None], np.uint32(0)), axis=0
            ).astype(np.uint32)
            for k in range(3)
        ]
        base = lut3(lut, *values)
        for _ in range(8):  # other contents of the tainted bytes
            other = [
                (v & ~m) | (rng.integers(0, 2**32, n, dtype=np.uint32) & m)
                for v, m in zip(values, masks, strict=True)
            ]
            got = lut3(lut, *other)
            assert ((got == base) | (tr != 0)).all()
            assert (((got != 0) == (base != 0)) | (tp != 0)).all()
