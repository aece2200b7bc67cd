"""P2R and R2P with the whole predicate file (``PR``), as CUTLASS mainloops and Triton emit
them (``P2R R14, PR, RZ, 0x1``), against values worked out by hand."""

from __future__ import annotations

import numpy as np

from shmem_cli.cuda import sass
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.decode import decode_function
from shmem_cli.trace.emulator.state import Block, Launch

from .test_trace_datapaths import DATA_WORD, words_launch


def _block(body: str, threads: int = 8) -> Block:
    lines = ['.section\t.text._Z1kv,"ax",@progbits', '\t//## File "k.cu", line 3']
    lines += [f"        /*{16 * i:04x}*/  {t} ;" for i, t in enumerate(body.strip().splitlines())]
    (fn,) = sass.parse("\n".join(lines))
    blk = Block(Launch(block=(threads, 1, 1), static_smem=256))
    execute.run_block(fn, decode_function(fn), blk)
    return blk


# P0 = tid bit 0, P1 = tid bit 1, P3 = tid bit 2 (P2 stays false)
_PREDICATES = """S2R R0, SR_TID.X
LOP3.LUT P0, RZ, R0, 0x1, RZ, 0xc0, !PT
LOP3.LUT P1, RZ, R0, 0x2, RZ, 0xc0, !PT
LOP3.LUT P3, RZ, R0, 0x4, RZ, 0xc0, !PT
MOV R5, 0xffffffff"""


def test_p2r_packs_the_masked_predicates_into_bits() -> None:
    blk = _block(_PREDICATES + "\nP2R R2, PR, RZ, 0x1\nP2R R3, PR, RZ, 0xf\nEXIT")
    for tid in range(8):
        p0, p1, p3 = tid & 1, (tid >> 1) & 1, (tid >> 2) & 1
        assert blk.r[2, tid] == p0  # P2R R14, PR, RZ, 0x1: just P0
        assert blk.r[3, tid] == p0 | p1 << 1 | p3 << 3  # P2 is false


def test_p2r_into_a_byte_keeps_the_other_bits() -> None:
    blk = _block(_PREDICATES + "\nP2R R4, PR, R5.B1, 0xb\nP2R.B2 R6, PR, R5, 0x2\nEXIT")
    for tid in range(8):
        p0, p1, p3 = tid & 1, (tid >> 1) & 1, (tid >> 2) & 1
        # bits 8, 9 and 11 of 0xffffffff replaced by P0, P1 and P3
        assert blk.r[4, tid] == (0xFFFFFFFF & ~(0xB << 8)) | (p0 | p1 << 1 | p3 << 3) << 8
        assert blk.r[6, tid] == (0xFFFFFFFF & ~(0x2 << 16)) | p1 << 17


def test_r2p_restores_predicates_from_a_byte() -> None:
    # R6 = tid << 8: R2P PR, R6.B1, 0x3 sets P0 = tid bit 0 and P1 = tid bit 1, leaves P3
    blk = _block(
        _PREDICATES + "\nSHF.L.U32 R6, R0, 0x8, RZ\nPLOP3.LUT P0, PT, PT, PT, PT, 0x0, 0x0\n"
        "R2P PR, R6.B1, 0x3\nP2R R7, PR, RZ, 0x7f\nEXIT"
    )
    for tid in range(8):
        assert blk.p[0, tid] == bool(tid & 1) and blk.p[1, tid] == bool(tid & 2)
        assert blk.r[7, tid] == (tid & 3) | ((tid >> 2) & 1) << 3


def test_r2p_round_trips_p2r() -> None:
    blk = _block(
        _PREDICATES + "\nP2R R8, PR, RZ, 0x7f\nPLOP3.LUT P0, PT, PT, PT, PT, 0x0, 0x0\n"
        "PLOP3.LUT P3, PT, PT, PT, PT, 0x0, 0x0\nR2P PR, R8, 0x7f\nP2R R9, PR, RZ, 0x7f\nEXIT"
    )
    assert (blk.r[8] == blk.r[9]).all()
    assert [int(v) for v in blk.r[9]] == [(t & 3) | ((t >> 2) & 1) << 3 for t in range(8)]


# P1 = false; where the block's word of a is not 0, R2P sets P1 (bit 1 of R6 = 2); P1 guards
# a warp's store: blocks 1-3 (a = 1) store, block 0 (a = 0) does not
_R2P_GUARD = (
    DATA_WORD
    + """MOV R6, 0x2
PLOP3.LUT P1, PT, PT, PT, PT, 0x0, 0x0
@P0 R2P PR, R6, 0x2
@P1 STS [R2], R0
EXIT"""
)


def test_r2p_under_a_guard_on_data_passes_it_to_the_predicates_it_sets() -> None:
    """R2P's predicates are its destinations: a guard on global data around it (which the
    proof of alike blocks lets through, R2P computing values only) taints them, so the store
    they guard is seen to depend on the data (blocks 1-3 store, block 0 does not)."""
    lines = ['.section\t.text.r2p_guard,"ax",@progbits']
    lines += [f"        /*{16 * i:04x}*/  {t} ;" for i, t in enumerate(_R2P_GUARD.splitlines())]
    (fn,) = sass.parse("\n".join(lines))
    assert ("P", 1, 1) in decode_function(fn).destinations[10]
    tr = execute.run(fn, words_launch([0, 1, 1, 1]), grid=True)
    (store,) = tr.records
    assert (store.n, store.predicated_off) == (3, 1)  # by hand: 3 warps store, 1 is off
    assert tr.coverage is not None and tr.coverage.mode == "whole"


def test_plop3_of_one_input_and_pt_gives_each_truth_table_bit() -> None:
    """PLOP3 whose inputs but one are PT or !PT (the loop tests nvcc emits: ``PLOP3.LUT P0,
    PT, PT, PT, UP1, 0x80, 0x0``): each result the truth table's bit at its inputs, lane by
    lane, and the one input's taint, for every table and every place of that input."""
    rng = np.random.default_rng(3)
    value, taint = rng.random(32) < 0.5, rng.integers(0, 4, 32).astype(np.uint8)
    for place in range(3):
        for lut in range(0, 256, 7):
            for consts in ((True, True), (True, False), (False, True), (False, False)):
                fixed = list(consts)
                fixed.insert(place, None)  # type: ignore[arg-type]
                names = ["UP1" if f is None else ("PT" if f else "!PT") for f in fixed]
                lines = ['.section\t.text._Z1kv,"ax",@progbits']
                text = f"PLOP3.LUT P0, P2, {', '.join(names)}, {lut:#x}, {255 - lut:#x}"
                lines.append(f"        /*0000*/  {text} ;")
                (fn,) = sass.parse("\n".join(lines))
                blk = Block(Launch(block=(32, 1, 1), static_smem=256))
                blk.up[1], blk.tup[1] = value, taint
                decode_function(fn)[0](blk, slice(None))
                for lane in range(32):
                    a, b, c = (bool(value[lane]) if f is None else f for f in fixed)
                    bit = 4 * a + 2 * b + c
                    assert blk.p[0, lane] == bool(lut >> bit & 1), (text, lane)
                    assert blk.p[2, lane] == bool((255 - lut) >> bit & 1), (text, lane)
                assert (blk.tp[0] == taint).all() and (blk.tp[2] == taint).all()
