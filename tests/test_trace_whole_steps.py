"""Whole steps (shmem_cli/trace/emulator/whole: an instruction of every thread at once, on
the block's register rows) leave the block as the instruction's own step leaves it: its
registers, their taint, shared memory and the requests recorded, on values of every kind
(the float32 corner cases decline to the own step), and an error where the own step has one.
A warp's row seen before is found again by its bytes with the number the hash table gives
(shmem_cli/trace/rows_seen.py), within the memos' bound.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

from shmem_cli.hardware.engine import AccessKind
from shmem_cli.trace.distinct_rows import DistinctRows, every_lane
from shmem_cli.trace.emulator.decode import decode_function, is_recording
from shmem_cli.trace.emulator.ops import floating
from shmem_cli.trace.emulator.state import Block, Launch, TraceError
from shmem_cli.trace.emulator.whole import chains
from shmem_cli.trace.emulator.whole.rows import Rows
from shmem_cli.trace.requests import InstructionRecords
from shmem_cli.trace.rows_seen import SeenBudget

from .test_trace_one_warp import SPECIAL
from .test_trace_ops import _program

_U = np.uint32
BODY = """FFMA R8, R1, R2, R3
FFMA R3, R3, R3, R3
FMUL R9, R4, R5
FADD R10, R6, R7
LDS R11, [UR4+0x10]
LDS.64 R12, [R20]
LDS.128 R16, [R21+UR5+0x20]
STS [R21+0x8], R9
STS.64 [R20], R2
STS.128 [UR4+0x40], R12
LDS.128 R24, [UR4+0x40]
FFMA R1, -R2, R3, R4
FFMA R5, R6, R7, RZ
FFMA R26, -R2, R0, 1
FMUL R27, R4, UR6
FADD R28, -R6, R7
FFMA R29, R1, -R2, -R3
FADD R30, R6, 0.5
FFMA R31, |R1|, R2, R3
STS [R20], RZ
EXIT"""


def _blocks(seed: int, threads: int) -> tuple[Block, Block]:
    """Two equal blocks: registers of every kind of value, addresses in the window (a lane
    of R20/R21 misaligned or past the window on some seeds), taint here and there."""
    rng = np.random.default_rng(seed)
    launch = Launch(block=(threads, 1, 1), static_smem=1024)
    out = [Block(launch, registers=32) for _ in range(2)]
    values = rng.choice(SPECIAL, (32, threads))
    normal = rng.standard_normal((8, threads)).astype(np.float32).view(_U)
    share = 0.7 if seed % 2 else 1.0  # (even seeds: everyday numbers in R0-R7, no NaN)
    values[:8] = np.where(rng.random((8, threads)) < share, normal, values[:8])
    slots = rng.integers(0, 60, threads)
    values[20] = 0x400 + 16 * slots + (rng.integers(0, 2, threads) * 4 * (seed % 3 == 1))
    values[21] = 0x400 + 16 * rng.integers(0, 56, threads) + (0x1000 if seed % 5 == 4 else 0)
    taint = np.where(rng.random((32, threads)) < 0.1, rng.integers(1, 256, (32, threads)), 0)
    smem = rng.integers(0, 256, out[0].smem.shape)
    tsmem = np.where(rng.random(out[0].smem.shape) < 0.05, 1, 0)
    for b in out:
        b.r[:32] = values
        b.tr[:32] = taint
        b.ur[4] = 0x400 + 16 * (seed % 7) + (16 * (b.lane % 3) if seed % 4 == 3 else 0)
        b.ur[5] = 0x40
        b.ur[6] = values[5]  # a float32 (of every kind on odd seeds)
        b.smem[:] = smem
        b.tsmem[:] = tsmem
    return out[0], out[1]


def _state(b: Block) -> list[bytes]:
    recs = sorted(b.rec.by_index.items())
    kept = [(i, r.n, r.addr.tobytes(), r.warp[: r.n].tobytes()) for i, r in recs]
    flags = [(r.data_dependent[: r.n].tobytes(), r.not_modelled[: r.n].tobytes()) for _, r in recs]
    sources = [(r.sources, r.iteration[: r.n].tobytes()) for _, r in recs]
    taint = repr((flags, sources, sorted(b.rec.tainted.items()))).encode()
    return [
        b.r.tobytes(),
        b.tr.tobytes(),
        b.smem.tobytes(),
        b.tsmem.tobytes(),
        repr(kept).encode(),
        taint,
    ]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (NaNs; execute runs under errstate)
@pytest.mark.parametrize("threads", [32, 64])
def test_a_whole_step_leaves_the_block_as_its_own_step(threads: int) -> None:
    fn = _program(BODY)
    program = decode_function(fn)
    assert [w is not None for w in program.whole] == [True] * 17 + [False] * 4
    errors = 0
    for seed in range(24):
        own, whole = _blocks(seed, threads)
        rows = Rows(whole)
        for k in range(len(fn.instructions) - 1):
            step = program.whole[k]
            if step is None:
                continue
            try:
                program[k](own, slice(None))
            except TraceError as exc:
                with pytest.raises(TraceError) as err:
                    step(whole, rows)
                assert err.value.message == exc.message
                errors += 1
                break
            step(whole, rows)
            assert _state(own) == _state(whole), (seed, k)
    assert errors >= 4  # misaligned and outside the window, said as the own step says


def test_a_row_seen_before_keeps_its_number_within_the_memos_bound() -> None:
    rng = np.random.default_rng(5)
    pool = rng.integers(0, 1 << 16, (6, 32)).astype(np.int64) * 4
    every = every_lane(32)
    budget = SeenBudget(limit=3 * (256 + 120))  # room for three rows' entries
    rec = InstructionRecords(0, None, AccessKind("load", 4), 32, seen_budget=budget)  # type: ignore[arg-type]
    plain = DistinctRows(32)
    picks = rng.integers(0, 6, 60).tolist()
    for p in picks:
        rec.add_one(pool[p], every, 0, 0, 0)
    assert rec.row[: rec.n].tolist() == [plain.add_row(pool[p : p + 1], every) for p in picks]
    assert len(rec.seen.rows) == 3 and budget.left < 256 + 120


CHAIN_BODY = """FFMA R8, R1, R2, R3
FFMA R3, R3, R8, R3
FMUL R9, R4, UR6
FFMA R10, -R6, R7, R0
FFMA R3, R9, -R3, 1
FFMA R1, -R2, R3, RZ
EXIT"""


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("threads", [32, 64])
def test_a_chain_of_float_steps_leaves_the_block_as_their_own_steps(threads: int) -> None:
    if is_recording():  # tests/opcode_recorder.py: every step then runs alone
        pytest.skip("the opcode recorder runs every step alone: no chain is made")
    fn = _program(CHAIN_BODY)
    program = decode_function(fn)
    assert [c is not None and c[0] for c in program.chains] == [6, 5, 4, 3, 2, False, False]
    tests: list[bool] = []

    def counted(*args: object) -> bool:
        tests.append(floating.plain(*args))  # type: ignore[arg-type]
        return tests[-1]

    with mock.patch.object(chains, "plain", counted):
        for seed in range(24):
            for first in (0, 3):
                own, whole = _blocks(seed, threads)
                whole.byte_clean = {} if seed % 3 else {("R", 5): np.zeros((4, threads), _U)}
                own.byte_clean = dict(whole.byte_clean)
                for k in range(first, 6):
                    program[k](own, slice(None))
                program.chains[first][1](whole, Rows(whole))
                assert _state(own) == _state(whole), (seed, first)
    assert True in tests and False in tests  # chains kept and chains put back
