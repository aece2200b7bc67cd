"""The clocks a kernel reads, and delay loops on them fast-forwarded
(shmem_cli/trace/emulator/sync/clock.py).

The kernels are the project's own: tests/data/trace/clockspin/kernels/clockspin.cu (and
clockspin_g.cu, built with -G). The oracle of a delay is its kernel's twin without the
delay (``cs_plain``): the shared-memory report must be the same. A wait ends in about
log2(cycles / FIRST_JUMP) reads of the clock: counted by a spy on :meth:`Clock.read`
(each read is a step of every warp at the instruction), never timed.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator.budget import REPEAT_FROM, Repeats
from shmem_cli.trace.emulator.state import Block, GlobalMemory, Launch
from shmem_cli.trace.emulator.sync import clock
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.result import KernelTrace
from shmem_cli.trace.tracer import find_function, trace_kernel

from .conftest import HANG_S, TRACE_DATA, needs_nvdisasm
from .test_trace_measured import cubin

CUBIN = TRACE_DATA / "clockspin" / "clockspin.sm_90.cubin"
CUBIN_G = TRACE_DATA / "clockspin" / "clockspin_g.sm_90.cubin"
N = 256  # the kernels' block


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pc of every clock read (one a step) during the test."""
    seen: list[int] = []
    real = clock.Clock.read

    def spy(self: clock.Clock, name: str, warps: Any, ctas: Any, ins: Any) -> Any:
        seen.append(ins.pc)
        return real(self, name, warps, ctas, ins)

    monkeypatch.setattr(clock.Clock, "read", spy)
    return seen


def run(
    kernel: str, args: tuple[str, ...], block: int = N, path: Path = CUBIN
) -> tuple[KernelTrace, list[bytes]]:
    """Trace ``kernel`` (one block, liveness-guarded); (its report, each buffer after it)."""
    info, disassembly = cubin(path)
    k = find_kernel(info, kernel)
    plan = plan_launch(k, kernel_params(k, None), block=(block, 1, 1), grid=(1, 1, 1), args=args)
    memory = GlobalMemory()
    start = time.monotonic()
    kt = trace_kernel(find_function(disassembly, k, info.path), k, info.arch, plan, memory=memory)
    assert time.monotonic() - start < HANG_S  # a liveness guard: the bound is counted below
    names = [b.param.name or f"param{b.param.ordinal}" for b in plan.buffers]
    return kt, [memory.read(n) for n in names]


def same_report(a: KernelTrace, b: KernelTrace) -> None:
    """Equal shared-memory totals and per-instruction costs (the instructions' pcs differ)."""
    assert a.totals == b.totals
    assert [(x.cost.totals, x.cost.lane_accesses) for x in a.accesses] == [
        (x.cost.totals, x.cost.lane_accesses) for x in b.accesses
    ]


def most_reads(cycles: int) -> int:
    """The reads a wait of ``cycles`` takes at most: three that jump nothing, each the first
    at its instruction (t0, the test nvcc may copy before a loop, the loop's own), then one a
    jump, doubling from FIRST_JUMP, till they pass it."""
    return 3 + math.ceil(math.log2(cycles / clock.FIRST_JUMP + 1))


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "arg", "cycles"),
    [
        ("cs_delay", "1=1000000", 1_000_000),
        ("cs_delay", f"1={1 << 40}", 1 << 40),  # past 2^32: the high word carries
        ("cs_lane", f"1={1 << 40}", 1 << 40),  # one lane waits, the others at the barrier
        ("cs_backoff", "1=1000000", 1_000_000),  # __nanosleep in the loop
        ("cs_timer", "1=1000000000", 1_000_000_000 * clock.CYCLES_PER_NS),  # one second
    ],
)
def test_a_delay_ends_in_logarithmically_many_reads_and_changes_no_access(
    kernel: str, arg: str, cycles: int, reads: list[int]
) -> None:
    plain, _ = run("cs_plain", ("1=0",))
    assert reads == [] and plain.clock_note is None
    delayed, _ = run(kernel, (arg,))
    same_report(delayed, plain)
    assert 3 <= len(reads) <= most_reads(cycles)
    assert delayed.clock_note is not None and "fast-forwarded" in delayed.clock_note


@needs_nvdisasm
@pytest.mark.parametrize("cycles", [3_000_000_000, (1 << 32) - (1 << 28)])
def test_a_wait_measured_in_32_bits_ends_short_of_the_wrap(cycles: int, reads: list[int]) -> None:
    # (unsigned)clock() - t0 < cycles: jumps stop growing at 2^28, so the low word, climbing
    # from 0, passes any cycles up to 2^32 - 2^28 before it wraps: 19 doublings from 2^10,
    # then at most 16 jumps of 2^28
    plain, _ = run("cs_plain", ("1=0",))
    delayed, _ = run("cs_clock32", (f"1={cycles}",))
    same_report(delayed, plain)
    assert len(reads) <= 3 + 19 + 16


@needs_nvdisasm
def test_a_debug_build_whose_clock_call_uses_local_memory_is_fast_forwarded(
    reads: list[int],
) -> None:
    # -G: clock() is a call that saves its return address with STL and loads it with LDL
    plain, _ = run("cs_g_plain", ("1=0",), path=CUBIN_G)
    delayed, _ = run("cs_g_delay", ("1=1000000",), path=CUBIN_G)
    same_report(delayed, plain)
    assert len(reads) <= most_reads(1_000_000)


@needs_nvdisasm
def test_sleeps_without_a_clock_end_and_say_nothing(reads: list[int]) -> None:
    plain, _ = run("cs_plain", ("1=0",))
    napped, _ = run("cs_nap", ("1=0",))
    same_report(napped, plain)
    assert reads == [] and napped.clock_note is None


@needs_nvdisasm
def test_timing_code_around_real_work_reads_a_positive_difference(reads: list[int]) -> None:
    n = 64
    timed, (out, dt) = run("cs_timed", (f"2={n}",))
    untimed, (out0, dt0) = run("cs_untimed", (f"2={n}",))
    same_report(timed, untimed)
    # the loop's trip count: n shared loads a thread, as without the clock
    assert timed.totals["load"].requests == untimed.totals["load"].requests == n * N // 32
    assert out == out0  # the sums
    diffs = np.frombuffer(dt[: 8 * N], dtype=np.int64)
    assert not np.frombuffer(dt0[: 8 * N], dtype=np.int64).any()
    # at least the loads' own cycles: n warp instructions of each of the 8 warps
    assert (diffs >= n * (N // 32) * clock.CYCLES_PER_WARP_INSTRUCTION).all()
    assert (diffs < 1 << 32).all()
    assert timed.clock_note is None  # shared loads between the reads: no spin
    assert len(reads) == 2


@needs_nvdisasm
def test_reads_strictly_increase_and_the_high_word_agrees(reads: list[int]) -> None:
    cycles = 1 << 33  # the delay first takes the clock past 2^32
    _, (t, hi) = run("cs_series", (f"2={cycles}",))
    t64 = np.frombuffer(t[: 8 * N * 8], dtype=np.int64).reshape(8, N)
    h32 = np.frombuffer(hi[: 4 * N * 4], dtype=np.uint32).reshape(4, N)
    assert (t64[0] >= cycles).all()
    assert (np.diff(t64, axis=0) > 0).all()  # a, b of round 0, then of round 1, ...
    for i in range(4):  # %clock_hi, read between a and b: a's high word or b's
        a, b = t64[2 * i] >> 32, t64[2 * i + 1] >> 32
        assert ((a <= h32[i]) & (h32[i] <= b)).all()
        assert (h32[i] >= 2).all()


@needs_nvdisasm
def test_a_spin_on_a_flag_after_a_clock_read_is_stopped_as_a_repeat() -> None:
    # the clock is read once, before the loop: the state repeats with no read between
    with pytest.raises(ShmemError, match="can never end"):
        run("cs_stuck", (), block=32)


@needs_nvdisasm
def test_a_flag_spin_with_a_timeout_on_the_clock_ends_by_its_timeout(reads: list[int]) -> None:
    # a global load every iteration: no fast-forward; the loop runs past the point where the
    # repeat detector keeps its state (REPEAT_FROM), and is not taken for an endless one
    kt, _ = run("cs_timeout", ("2=20000",), block=32)
    assert len(reads) > REPEAT_FROM + 1
    assert kt.clock_note is None


def _ins(pc: int, opcode: str = "CS2R", mods: tuple[str, ...] = ()) -> Any:
    return SimpleNamespace(pc=pc, opcode=opcode, mods=mods)


def test_a_spin_is_a_reread_at_one_instruction_with_nothing_observable_between() -> None:
    c = clock.Clock(warps=2, ctas=1, warp_size=32)
    w0, cta = np.zeros(32, dtype=np.int64), np.zeros(32, dtype=np.intp)
    assert int(c.read("SR_CLOCKLO", w0, cta, _ins(0x40))[0]) == 0  # no work yet
    second = int(c.read("SR_CLOCKLO", w0, cta, _ins(0x40))[0])
    assert second == clock.FIRST_JUMP and c.spins == 1  # a spin: the clock jumped
    third = int(c.read("SR_CLOCKLO", w0, cta, _ins(0x40))[0])
    assert third - second == 2 * clock.FIRST_JUMP  # doubled
    other = int(c.read("SR_CLOCKLO", w0, cta, _ins(0x80))[0])
    assert other - third == 1  # another instruction: its first read there
    c.touch(np.array([0]))  # a store, say
    after = int(c.read("SR_CLOCKLO", w0, cta, _ins(0x40))[0])
    assert after - other == 1 and c.spins == 2
    c.work[0] = 32 * 100  # 100 warp instructions since
    worked = int(c.read("SR_CLOCKLO", w0, cta, _ins(0x80))[0])
    assert worked == 100 * clock.CYCLES_PER_WARP_INSTRUCTION + 3 * clock.FIRST_JUMP
    high = int(c.read("SR_CLOCKHI", w0, cta, _ins(0x90, "S2R"))[0])
    assert high == 0 and c.reads == 7


def test_both_words_come_from_one_value_and_jumps_stop_at_their_caps() -> None:
    c = clock.Clock(warps=1, ctas=1, warp_size=32)
    w, cta = np.zeros(32, dtype=np.int64), np.zeros(32, dtype=np.intp)
    for _ in range(80):  # 64-bit reads: the clock stops jumping at CAP
        low = c.read("SR_CLOCKLO", w, cta, _ins(0x10))
    value = (int(c.high[0]) << 32) | int(low[0])
    assert clock.CAP <= value < clock.CAP + 100
    c32 = clock.Clock(warps=1, ctas=1, warp_size=32)
    seen = [int(c32.read("SR_CLOCKLO", w, cta, _ins(0x10, "S2R"))[0]) for _ in range(40)]
    steps = np.diff(np.array(seen, dtype=np.int64) % (1 << 32))
    assert steps.max() <= clock.CAP_32 + 1  # the 32-bit read's jumps stop growing


def test_a_state_met_again_is_a_repeat_only_with_no_clock_read_between() -> None:
    blk = Block(Launch(block=(32, 1, 1)))
    repeats = Repeats([], threads=32)
    first = repeats.first
    assert not repeats.look(blk, 0, first)  # kept
    assert repeats.look(blk, 0, first + 1)  # the same state: a repeat
    blk.clock.read("SR_CLOCKLO", blk.warp, blk.cta, _ins(0x10))
    assert not repeats.look(blk, 0, first + 2)  # the clock was read: it may end by it


def test_a_look_that_checks_the_last_difference_first_still_compares_the_whole_state() -> None:
    # issue 29: a look compares first the register row where the last failed look found a
    # difference; a state that differs elsewhere is still not a repeat, one met again is
    blk = Block(Launch(block=(64, 1, 1)))
    repeats = Repeats([], threads=64)
    first = repeats.first
    assert not repeats.look(blk, 0, first)  # kept
    blk.r[5, 3] = 7
    assert not repeats.look(blk, 0, first + 1)  # R5 of thread 3 differs
    blk.r[5, 3] = 0
    blk.r[9, 60] = 1
    assert not repeats.look(blk, 0, first + 2)  # R5 is back; R9 of thread 60 differs
    blk.r[9, 60] = 0
    blk.smem[100] = 2
    assert not repeats.look(blk, 0, first + 3)  # registers are back; shared memory differs
    blk.smem[100] = 0
    blk.p[1, 0] = True
    assert not repeats.look(blk, 0, first + 4)  # a predicate differs
    blk.p[1, 0] = False
    assert repeats.look(blk, 0, first + 5)  # every part back: the state kept, a repeat
