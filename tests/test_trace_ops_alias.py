"""Instructions whose destination is also one of their sources (issue 29/30).

A plain register read over every thread of a block (a converged step, or a wide one) is a
view of the register file (emulator/operands.py): a step that wrote a destination and then
read a source the destination aliases would see its own result. The HSETP2 bug was one (a
predicate operand read after the first of two predicates was written; predicate operands are
copies since). Every step computes what it writes before its first write; these tests pin
that for the forms ptxas emits where a destination overlaps a source (a 64-bit result into
the pair that held an input, a carry out beside a sum written over its operand, a load over
its address register, two predicates, a shuffle or a vote over its own input): results worked
out by hand, and each form run on one state over every thread (views) and over an index of
the threads (copies), which must agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from shmem_cli.trace.emulator.decode import decode_function
from shmem_cli.trace.emulator.state import Block, Launch, TraceError

from .test_trace_ops import _program
from .test_trace_ops_wide import _registers_after

THREADS = 64

#: forms from the project's kernels and ptxas (tests/data/trace cubins), their registers
#: renamed so that a destination is one of the sources (or the pair/quad holding one)
ALIASED = [
    "IMAD.WIDE R2, R2, 0x4, R2",
    "IMAD.WIDE.U32 R2, P0, R3, R5, R2",
    "IMAD.HI.U32 R2, R2, R3, R2",
    "IADD3 R2, P1, R2, 0x80, RZ",
    "IADD3 R2, P4, P5, R2, R3, R2",
    "IADD3.X R3, R3, R5, RZ, P0, P1",
    "LEA R2, P0, R2, R3, 0x2",
    "LEA.HI.X R3, R3, R2, R3, 0x2, P0",
    "SHF.R.U64 R2, R2, 0x4, R3",
    "SHF.L.U64.HI R3, R2, 0x3, R3",
    "DADD R2, R2, R4",
    "DFMA R2, R2, R4, R2",
    "DSETP.MIN.AND P0, P1, R2, R4, P0",
    "PRMT R2, R3, 0x5410, R2",
    "F2FP.F16.F32.PACK_AB R2, R3, R2",
    "I2F.F64 R2, R2",
    "I2F.F64.S64 R2, R2",
    "F2F.F16.F64 R2, R2",
    "SEL R2, R2, R3, P0",
    "HADD2.F32 R2, -RZ, R2.H0_H0",
    "HSETP2.LEU.XOR P0, P1, R5, R6, P0",
    "HMNMX2 R2, R2, R3, PT",
    "LDS.64 R2, [R2]",
    "LDS.128 R4, [R7]",
    "LDSM.16.M88.4 R4, [R7]",
    "SHFL.IDX PT, R2, R2, R2, 0x1f",
    "VOTE.ANY R2, PT, P0",
    "VOTE.ALL P0, P0",
    "POPC R2, R2",
    "FMNMX R2, R2, R3, !PT",
    "VIMNMX.S16x2 R2, P0, P1, R2, R3, !PT",
    "R2P PR, R2, 0x7f",
    "MATCH.ANY R2, R2",
    "IDP.4A.S8.S8 R2, R2, R3, R2",
    "ATOMS.CAS R2, [R2], R2, R3",
    "ATOMS.CAS.64 R2, [R4], R2, R4",
    "MUFU.RCP64H R3, R3",
    "UIMAD.WIDE.U32 UR4, UR4, UR6, UR4",
    "UIADD3 UR4, UP0, UR4, 0x10, URZ",
    "ULEA.HI.X UR5, UR4, UR5, UR6, 0x2, UP0",
    "HMMA.16816.F32 R8, R4, R8, R8",
]


def _state(seed: int, small: bool) -> Block:
    """A block of random registers, predicates, taints and shared memory (``small``:
    registers that are shared addresses, multiples of 16 below 512)."""
    blk = Block(Launch(block=(THREADS, 1, 1), static_smem=1024))
    rng = np.random.default_rng(seed)
    for regs in (blk.r, blk.ur):
        if small:
            regs[...] = rng.integers(0, 32, regs.shape) * 16
        else:
            regs[...] = rng.integers(0, 1 << 32, regs.shape, dtype=np.uint64)
    for preds in (blk.p, blk.up):
        preds[...] = rng.integers(0, 2, preds.shape).astype(bool)
    for taint in (blk.tr, blk.tur, blk.tp, blk.tup):
        taint[...] = rng.integers(0, 4, taint.shape)
    blk.ur[...], blk.up[...] = blk.ur[:, :1], blk.up[:, :1]  # uniform
    blk.smem[...] = rng.integers(0, 256, blk.smem.shape)
    return blk


def _files(blk: Block) -> list[np.ndarray]:
    return [blk.r, blk.tr, blk.ur, blk.tur, blk.p, blk.tp, blk.up, blk.tup, blk.smem]


@pytest.mark.parametrize("text", ALIASED)
def test_an_aliasing_form_reads_its_sources_before_it_writes(text: str) -> None:
    (step,) = decode_function(_program(text))[:1]
    ran = 0
    for seed, small in ((30, False), (31, True)):
        views, copies = _state(seed, small), _state(seed, small)
        try:
            step(views, slice(None))  # every thread: each plain register read is a view
        except TraceError:  # an address these values cannot be (both runs fail alike)
            with pytest.raises(TraceError):
                step(copies, np.arange(THREADS))
            continue
        step(copies, np.arange(THREADS))  # an index of the threads: each read is a copy
        for a, b in zip(_files(views), _files(copies), strict=True):
            assert np.array_equal(a, b), text
        ran += 1
    assert ran, f"{text} ran on neither state"


def test_a_carry_out_is_of_the_operand_the_sum_overwrites() -> None:
    # ptxas's 64-bit add, low word: IADD3 R0, P0, R0, R7, RZ (tests/data/trace forms)
    blk = _registers_after(
        """MOV R0, 0xfffffff0
MOV R7, 0x20
IADD3 R0, P0, R0, R7, RZ
EXIT"""
    )
    # 0xfffffff0 + 0x20 = 0x1_00000010: the low word, and a carry out (of the old R0)
    assert int(blk.r[0][0]) == 0x10 and bool(blk.p[0][0])


def test_a_wide_product_accumulates_into_the_pair_it_reads() -> None:
    blk = _registers_after(
        """MOV R2, 0x10
MOV R3, 0x80000001
IMAD.WIDE.U32 R2, R3, 0x4, R2
EXIT"""
    )
    # 0x80000001 * 4 + 0x80000001_00000010 = 0x2_00000004 + 0x80000001_00000010
    assert (int(blk.r[2][0]), int(blk.r[3][0])) == (0x14, 0x80000003)


def test_a_load_over_its_own_address_register_reads_the_old_address() -> None:
    blk = _registers_after(
        """MOV R2, 0x18
MOV R4, 0x11111111
MOV R5, 0x22222222
STS.64 [R2], R4
LDS.64 R2, [R2]
EXIT"""
    )
    assert (int(blk.r[2][0]), int(blk.r[3][0])) == (0x11111111, 0x22222222)


def test_a_shuffle_over_its_own_source_moves_the_old_values() -> None:
    blk = _registers_after(
        """S2R R2, SR_TID.X
SHFL.BFLY PT, R2, R2, 0x1, 0x1f
EXIT"""
    )
    assert blk.r[2][:32].tolist() == [lane ^ 1 for lane in range(32)]
