"""A warp's wait on the clock takes none of another warp's time (issue 30):
shmem_cli/trace/emulator/sync/clock_wait.py.

The kernels are the project's own (tests/data/trace/clockspin/kernels/clockspin.cu): one
warp waits on the clock while the other works to its own deadline (``cs_overlap``), times
its own section (``cs_overlap_timed``) or spins on a flag the waiter sets after its wait
(``cs_handoff``). Each starts from one ``t0`` both warps read, and the wait's loop comes
first in the code (the emulator runs the smallest pc first). The expected values are the
model's arithmetic, worked out by hand from the SASS (nvdisasm of the cubin), never read
back from a run.
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from shmem_cli.trace.emulator.state import GlobalMemory
from shmem_cli.trace.emulator.sync import clock
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.result import KernelTrace
from shmem_cli.trace.tracer import clock_note, find_function, trace_kernel

from .conftest import HANG_S, needs_nvdisasm
from .test_trace_clock import CUBIN
from .test_trace_measured import cubin

CPW = clock.CYCLES_PER_WARP_INSTRUCTION
#: cs_overlap's work loop, one iteration: LDS, VIADD, VIADD, STS, CS2R, IADD3, IMAD.X,
#: ISETP, ISETP.EX, BRA
WORK_LOOP = 10
#: the cycles of the worker's budget the waiter's first two jumps take (a jump no longer
#: than CTA_STALL stalls the whole CTA), before the waiter yields to it
STALLED = clock.FIRST_JUMP + clock.CTA_STALL
#: what the worker's count may fall short of the most it can reach: the cycles before its
#: first look at the clock (its setup, both warps' first instructions and the waiter's first
#: four reads: about 45 warp instructions) and the waiter's reads when it wakes to look at
#: the clock (6 warp instructions each, about log2(budget / FIRST_JUMP) + 1 of them)
SLACK = 20


def most(budget: int) -> int:
    """The most iterations the worker's loop runs in ``budget`` cycles less the stall."""
    return -(-(budget - STALLED) // (WORK_LOOP * CPW))


def trace(
    kernel: str, args: tuple[str, ...], grid: int = 1
) -> tuple[KernelTrace, list[bytes], list[int]]:
    """Trace ``kernel`` on 64 threads a block (liveness-guarded); (its report, each buffer
    after it, the pc of each step that read the clock)."""
    info, disassembly = cubin(CUBIN)
    k = find_kernel(info, kernel)
    plan = plan_launch(k, kernel_params(k, None), block=(64, 1, 1), grid=(grid, 1, 1), args=args)
    memory = GlobalMemory()
    pcs: list[int] = []
    real = clock.Clock.read

    def spy(self: clock.Clock, name: str, warps: Any, ctas: Any, ins: Any) -> Any:
        pcs.append(ins.pc)
        return real(self, name, warps, ctas, ins)

    start = time.monotonic()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(clock.Clock, "read", spy)
        kt = trace_kernel(
            find_function(disassembly, k, info.path), k, info.arch, plan, memory=memory
        )
    assert time.monotonic() - start < HANG_S  # a liveness guard: the bounds are counted below
    names = [b.param.name or f"param{b.param.ordinal}" for b in plan.buffers]
    return kt, [memory.read(n) for n in names], pcs


def waits(cycles: int) -> int:
    """The waiter's reads at most: a first read at its loop, two jumps that stall the CTA,
    a yield a doubling while the other works (at most as many as jumps), one jump a
    doubling after, and one read as it wakes."""
    return 1 + 2 + 2 * math.ceil(math.log2(cycles / clock.FIRST_JUMP + 1)) + 2


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize(("waiter", "worker", "grid"), [(0, 1, 1), (1, 0, 1), (0, 1, 3)])
def test_a_warp_working_to_its_own_deadline_keeps_its_budget_while_another_waits(
    waiter: int, worker: int, grid: int
) -> None:
    wait, budget = 1_000_000, 20_000
    args = (f"1={waiter}", f"2={worker}", f"3={wait}", f"4={budget}")
    kt, (count,), pcs = trace("cs_overlap", args, grid)
    n = np.frombuffer(count[: 4 * 32], dtype=np.int32)
    # the worker's loop ran till its own deadline by its own instructions' cycles, less the
    # waiter's stall (before the fix: 0, the waiter's jumps had taken the clock past it)
    assert ((most(budget) - SLACK <= n) & (n <= most(budget))).all()
    assert kt.clock_note is not None  # the waiter's wait, alone then, was fast-forwarded
    loop_reads = [p for p in pcs if p == 0xA0]  # the waiter's loop (a step all CTAs run)
    assert len(loop_reads) <= waits(wait)


@needs_nvdisasm
def test_a_wait_shorter_than_the_others_work_ends_by_that_work_past_its_stall() -> None:
    wait, budget = 5_000, 20_000  # past the stall (3,072 cycles), well short of the work
    kt, (count,), pcs = trace("cs_overlap", ("1=0", "2=1", f"3={wait}", f"4={budget}"))
    n = np.frombuffer(count[: 4 * 32], dtype=np.int32)
    # before the fix: 907 of 2,494 at a budget of 50,000
    assert ((most(budget) - SLACK <= n) & (n <= most(budget))).all()
    assert kt.clock_note == clock_note(2)  # the stall's two jumps; the work ended the rest
    assert len([p for p in pcs if p == 0xA0]) <= waits(budget)


@needs_nvdisasm
def test_a_warp_timing_its_own_section_measures_its_own_cycles() -> None:
    n = 64
    _, (dt,), _ = trace("cs_overlap_timed", ("1=0", "2=1", "3=1000000", f"4={n}"))
    d = np.frombuffer(dt[: 8 * 32], dtype=np.int64)
    # the section: n / 4 turns of its 4-times unrolled loop (17 instructions: 4 LDS, 4 LOP3,
    # 5 VIADD, IMAD.SHL, UIADD3, ISETP, BRA), its set-up and the time read (under 30 more),
    # the waiter's first four reads (25) and its stall; before the fix 1,048,296: the
    # waiter's whole wait
    own = 17 * (n // 4) * CPW + STALLED
    assert ((own <= d) & (d <= own + 64 * CPW)).all()


@needs_nvdisasm
@pytest.mark.parametrize("cycles", [1_000_000, 1 << 40])
def test_a_flag_set_after_a_wait_reaches_the_warp_spinning_on_it(cycles: int) -> None:
    # the watcher's spin on the flag is proven and parked; then every warp waits, the
    # waiter's clock jumps, its wait ends and the flag it sets wakes the watcher
    kt, (_, waited, seen), pcs = trace("cs_handoff", ("3=0", "4=1", f"5={cycles}"))
    w = np.frombuffer(waited[: 8 * 32], dtype=np.int64)
    assert ((cycles <= w) & (w < 2 * cycles + 4 * clock.FIRST_JUMP)).all()
    assert (np.frombuffer(seen[: 4 * 32], dtype=np.int32) == 1).all()
    assert kt.clock_note is not None and kt.wait_note is not None
    assert len([p for p in pcs if p == 0x110]) <= waits(cycles)


class Host:
    """A stand-in for the scheduler's side (clock_wait.ClockWaits): which CTAs are busy."""

    def __init__(self, busy: list[bool]) -> None:
        self.state = np.array(busy)
        self.asked: list[list[int]] = []
        self.hurried = 0

    def busy(self) -> Any:
        return self.state

    def yielded(self, warps: Any) -> None:
        self.asked.append([int(w) for w in warps])

    def hurry(self) -> None:
        self.hurried += 1


def _ins(pc: int) -> Any:
    return SimpleNamespace(pc=pc, opcode="CS2R", mods=())


def test_a_spinning_warp_stalls_its_cta_briefly_then_yields_while_another_warp_works() -> None:
    c = clock.Clock(warps=2, ctas=1, warp_size=32)
    host = Host([True])
    c.host = host
    w0, w1, cta = np.zeros(32, np.int64), np.ones(32, np.int64), np.zeros(32, np.intp)
    assert int(c.read("SR_CLOCKLO", w0, cta, _ins(0x40))[0]) == 0
    # its first two jumps stall the CTA though warp 1 could work (no longer than CTA_STALL)
    assert int(c.read("SR_CLOCKLO", w0, cta, _ins(0x40))[0]) == clock.FIRST_JUMP
    stalled = int(c.read("SR_CLOCKLO", w0, cta, _ins(0x40))[0])
    assert stalled == STALLED and c.spins == 2 and host.asked == []
    # the next would be longer: warp 0 yields to warp 1 till the clock passes that jump
    assert int(c.read("SR_CLOCKLO", w0, cta, _ins(0x40))[0]) == stalled + 1 and c.spins == 2
    assert host.asked == [[0]] and int(c.until[0]) == stalled + 1 + 4 * clock.FIRST_JUMP
    assert c.waiting().tolist() == [True, False]
    c.work[0] = 32 * 5000  # warp 1 ran 5,000 warp instructions (10,000 cycles)
    now = 5000 * CPW + STALLED
    assert int(c.read("SR_CLOCKLO", w0, cta, _ins(0x40))[0]) == now
    assert int(c.until[0]) == now + 8 * clock.FIRST_JUMP  # yielded again, doubled
    # warp 1 now waits too, with warp 0 parked till its until: warp 1's jumps stop there
    host.state[0] = False
    c.read("SR_CLOCKLO", w1, cta, _ins(0x80))  # its first read there
    seen = [int(c.read("SR_CLOCKLO", w1, cta, _ins(0x80))[0]) for _ in range(4)]
    jumps = np.diff([now, *seen]).tolist()
    # 1, 2 and 4 FIRST_JUMP, then 8 would pass warp 0's until (now + 8): only so far
    assert jumps == [1024, 2048, 4096, 8 * 1024 - 7 * 1024]
    assert seen[-1] == int(c.until[0]) and host.hurried == 1 and c.spins == 6
    # warp 0 woke (the host's part): its first spin reads the time the others made
    c.until[0], c.woke[0] = -1, True
    woke = int(c.read("SR_CLOCKLO", w0, cta, _ins(0x40))[0])
    assert woke == seen[-1] + 1 and c.spins == 6
    # and warp 1 jumps its whole jump again
    again = int(c.read("SR_CLOCKLO", w1, cta, _ins(0x80))[0])
    assert again - seen[-1] == 16 * clock.FIRST_JUMP and c.spins == 7
