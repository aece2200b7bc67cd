"""Straight runs (issue 29/30, a warp stepping alone): where every thread of a batch runs
instructions that need nothing of the scheduler between them, the scheduler steps them in one
loop and counts them once (scheduler._straight_runs). What it counts must be what a step by
step run counts: the budget stops at the same step, a clock read sees every instruction run
before it, and the shared reads of a window give what the general paths give.
"""

from __future__ import annotations

import numpy as np
import pytest

from shmem_cli.trace.emulator import memory_bytes
from shmem_cli.trace.emulator.ops import memory
from shmem_cli.trace.emulator.state import Block, Launch, TraceError
from shmem_cli.trace.emulator.sync.clock import CYCLES_PER_WARP_INSTRUCTION

from .test_trace_ops import _program, _run
from .test_trace_ops_wide import _registers_after

LOOP = """IADD3 R1, R1, 0x1, RZ
IADD3 R2, R2, 0x2, RZ
IADD3 R3, R3, 0x3, RZ
IADD3 R4, R4, 0x4, RZ
BRA `(.text._Z1kv)"""


@pytest.mark.parametrize("per_thread", [156, 157, 158, 159])
def test_the_budget_stops_a_run_at_the_step_that_passes_it(per_thread: int) -> None:
    # a loop of a straight run of 4 and its branch, 64 threads: each step is 64
    # thread-instructions, and the step that passes per_thread x 64 stops the block, wherever
    # in the run it falls (156: the 157th step, the run's second)
    fn = _program(LOOP)
    fn.labels[".text._Z1kv"] = 0
    ran = (per_thread + 1) * 64
    with pytest.raises(TraceError, match=f"block \\(0,0,0\\) ran {ran:,} thread-instructions"):
        _run(fn, per_thread=per_thread)


def test_a_clock_read_after_a_run_counts_the_runs_instructions() -> None:
    # the second read follows the first and 4 IADD3s: 5 warp instructions of the one warp
    blk = _registers_after(
        """S2R R2, SR_CLOCKLO
IADD3 R4, R4, 0x1, RZ
IADD3 R5, R5, 0x1, RZ
IADD3 R6, R6, 0x1, RZ
IADD3 R7, R7, 0x1, RZ
S2R R8, SR_CLOCKLO
EXIT"""
    )
    assert int(blk.r[8][0]) - int(blk.r[2][0]) == 5 * CYCLES_PER_WARP_INSTRUCTION


def test_a_run_counts_each_instruction_and_every_thread() -> None:
    # 3 IADD3s then EXIT: 4 steps of 64 threads, each IADD3 once
    body = "IADD3 R1, R1, 0x1, RZ\nIADD3 R1, R1, 0x2, RZ\nIADD3 R1, R1, 0x4, RZ\nEXIT"
    trace = _run(_program(body))
    assert (trace.steps, trace.thread_instructions) == (4, 4 * 64)
    assert set(_registers_after(body).r[1].tolist()) == {7}


@pytest.mark.parametrize("width", [4, 8, 16])
def test_a_windows_aligned_read_gathers_what_the_general_path_does(width: int) -> None:
    rng = np.random.default_rng(width)
    data = rng.integers(0, 256, 4100, dtype=np.uint8)  # not a multiple of 16 bytes long
    taint = rng.integers(0, 4, 4100, dtype=np.uint8)
    off = rng.integers(0, 4100 // width, 32).astype(np.int64) * width
    for aligned in (True, False):
        got = memory_bytes.gather(data, off, width, False, aligned=aligned)
        words = [data[o : o + width].view(np.uint32) for o in off.tolist()]
        assert np.array_equal(got, np.array(words).T), aligned
        ors = [np.bitwise_or.reduce(taint[o : o + width]) for o in off.tolist()]
        assert memory_bytes.gather_taint(taint, off, width, aligned=aligned).tolist() == ors


@pytest.mark.parametrize(
    ("operand", "offset"), [("[R2+0x10]", 0x10), ("[R2+-0x8]", -8), ("[RZ+0x20]", 0x20)]
)
def test_an_address_of_one_register_is_its_value_plus_the_offset(operand: str, offset: int) -> None:
    fn = _program(f"LDS R0, {operand}\nEXIT")
    blk = Block(Launch(block=(32, 1, 1), static_smem=1024))
    blk.r[2] = np.arange(32, dtype=np.uint32) * 8 + 0xFFFFFF00  # near 2^32: no wrap in int64
    read = memory.address(fn.instructions[0].operands[1], fn.instructions[0])
    addr, _ = read(blk, slice(None))
    base = [0] * 32 if "RZ" in operand else [0xFFFFFF00 + 8 * k for k in range(32)]
    assert addr.dtype == np.int64 and addr.tolist() == [b + offset for b in base]
