"""Waits on a flag another warp or block sets (issue 29; sync/parking.py, sync/waiting_blocks.py).

The kernels are the project's own: tests/data/trace/spinwait/kernels/spinwait.cu. Each
expected value comes from the kernel's source and its inputs, as CUDA defines the launch:
a handoff inside a block ends with warp 1 holding what warp 3 wrote, a serial split-K
chain adds every block's partial in order z = 0, 1, ..., and a flag no thread sets is a
deadlock (exit status 2, a located error, no traceback).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator import grid as grids
from shmem_cli.trace.emulator.state import GlobalMemory
from shmem_cli.trace.emulator.sync import parking, waiting_blocks
from shmem_cli.trace.emulator.sync.convergence_state import BLOCKED
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.result import KernelTrace
from shmem_cli.trace.tracer import find_function, trace_kernel

from .conftest import HANG_S, TRACE_DATA, needs_nvdisasm
from .test_trace_measured import cubin

CUBIN = TRACE_DATA / "spinwait" / "spinwait.sm_90.cubin"
SLICES = 8  # sw_splitk's grid (1,1,SLICES)
N = 128  # its threads (and the columns it sums)


def run(
    kernel: str, block: int, grid: tuple[int, int, int], args: tuple[str, ...] = ()
) -> tuple[KernelTrace, dict[str, bytes]]:
    """Trace every block of ``kernel`` (liveness-guarded); its report, each buffer after it."""
    info, disassembly = cubin(CUBIN)
    k = find_kernel(info, kernel)
    plan = plan_launch(k, kernel_params(k, None), block=(block, 1, 1), grid=grid, args=args)
    memory = GlobalMemory()
    start = time.monotonic()
    kt = trace_kernel(find_function(disassembly, k, info.path), k, info.arch, plan, memory=memory)
    assert time.monotonic() - start < HANG_S
    names = [b.param.name or f"param{b.param.ordinal}" for b in plan.buffers]
    return kt, {n: memory.read(n) for n in names}


def ints(raw: bytes, n: int) -> list[int]:
    return np.frombuffer(raw[: 4 * n], dtype=np.int32).tolist()


def given(tmp_path: Path, values: list[int]) -> str:
    path = tmp_path / "in.bin"
    path.write_bytes(np.asarray(values, dtype=np.int32).tobytes())
    return f"0=@{path}"


@needs_nvdisasm
@pytest.mark.parametrize(("kernel", "times"), [("sw_handoff_shared", 3), ("sw_handoff_global", 5)])
def test_a_warp_spinning_on_a_flag_yields_to_the_warp_that_sets_it(
    tmp_path: Path, kernel: str, times: int
) -> None:
    values = [7 * i - 40 for i in range(32)]
    kt, buffers = run(kernel, 128, (1, 1, 1), (given(tmp_path, values),))
    # warp 1 copies out what warp 3 wrote after the flag: in[lane] * times + 1
    assert ints(buffers["param1"], 32) == [v * times + 1 for v in values]
    assert kt.wait_note is not None and "yielded" in kt.wait_note
    # warp 3's 32 stores of data[] are one request; warp 1's read of it another
    assert kt.totals["store"].requests >= 1 and kt.totals["load"].requests >= 1


@needs_nvdisasm
@pytest.mark.parametrize("rounds", [1, 3])
def test_halves_of_a_warp_taking_turns_in_one_spin_loop_both_run(
    tmp_path: Path, rounds: int
) -> None:
    # sw_halves: after its first turn, each half of the warp spins in the loop the other half
    # (a part of the warp of its own) is in; the half whose turn it is must run, not be parked
    # with the spinning half (budget.Repeats.spinners: only the threads that ran)
    values = [(7 * i) % 23 - 11 for i in range(2 * rounds * 16)]
    kt, buffers = run("sw_halves", 32, (1, 1, 1), (given(tmp_path, values), f"2={rounds}"))
    acc = [0] * 16
    for turn in range(2 * rounds):  # lanes 16-31 on even turns, lanes 0-15 on odd ones
        acc = [a * 3 + values[turn * 16 + j] for j, a in enumerate(acc)]
    assert ints(buffers["param1"], 16) == acc
    source = (CUBIN.parent / "kernels" / "spinwait.cu").read_text().splitlines()
    start = next(k for k, s in enumerate(source) if "void sw_halves(" in s)

    def line(text: str) -> int:
        return start + 1 + [s.strip() for s in source[start:]].index(text)

    def requests(text: str, op: str) -> int:
        at = line(text)
        return sum(a.cost.requests for a in kt.accesses if a.site.line == at and a.cost.op == op)

    # each turn, one half reads and writes its 16 words of acc (one request each) and one
    # lane hands the turn on; acc and the flag are set once before, and acc read once after
    fold = "acc[j] = acc[j] * 3 + in[turn * 16 + j];"
    assert requests(fold, "load") == requests(fold, "store") == 2 * rounds
    assert requests("if (j == 0) flag = turn + 1;", "store") == 2 * rounds
    assert requests("if (lane < 16) acc[j] = 0;", "store") == 1
    assert requests("if (lane == 0) flag = 0;", "store") == 1
    assert requests("if (lane < 16) out[j] = acc[j];", "load") == 1
    # the spin reads the flag at least once a turn (how often more: the order it ran in)
    assert requests("while (flag != turn) {", "load") >= 2 * rounds


@needs_nvdisasm
@pytest.mark.parametrize("block", [64, 256])
def test_a_producer_and_a_consumer_warp_pass_every_tile_through_two_shared_flags(
    tmp_path: Path, block: int
) -> None:
    # sw_tiles: warp 0 fills tile k once warp 1 took tile k - 1, warp 1 folds it once it is
    # full; each tile wakes each side, in each block of a batch (the other warps wait at the
    # barrier); block b scales its tiles by b + 1
    tiles, blocks = 8, 3
    values = [(11 * i) % 37 - 18 for i in range(tiles * 32)]
    _, buffers = run("sw_tiles", block, (blocks, 1, 1), (given(tmp_path, values), f"2={tiles}"))
    expected = []
    for b in range(blocks):
        sums = [0] * 32
        for k in range(tiles):
            sums = [s * 3 + values[k * 32 + j] * (b + 1) for j, s in enumerate(sums)]
        expected += sums
    assert ints(buffers["param1"], 32 * blocks) == expected


@needs_nvdisasm
def test_nothing_moves_a_parked_thread_before_it_wakes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # sync/parking.py: a parked thread's warp-mates wait for it at a WARPSYNC
    # (sw_handoff_shared), its block at a BAR.SYNC (sw_splitk), the other part of its warp in
    # its loop (sw_halves); when it wakes it must still be where it was parked
    wake = parking.Parking.wake
    groups: list[int] = []

    def checked(self: parking.Parking, blk: Any) -> bool:
        for g in self.groups:
            assert (blk.sched[g.ids] == parking.PARKED).all()
            assert (self.pc[g.ids] < BLOCKED).all()
        groups.append(len(self.groups))
        return wake(self, blk)

    monkeypatch.setattr(parking.Parking, "wake", checked)
    values = [(13 * i) % 41 - 20 for i in range(4 * N)]
    _, buffers = run("sw_handoff_shared", 128, (1, 1, 1), (given(tmp_path, values[:32]),))
    assert ints(buffers["param1"], 32) == [v * 3 + 1 for v in values[:32]]
    _, buffers = run("sw_splitk", N, (1, 1, 4), (given(tmp_path, values),))
    expected = [sum(values[z * N + (t + 1) % N] * (z + 1) for z in range(4)) for t in range(N)]
    assert ints(buffers["param1"], N) == expected
    _, buffers = run("sw_halves", 32, (1, 1, 1), (given(tmp_path, values[:96]), "2=3"))
    acc = [0] * 16
    for turn in range(6):
        acc = [a * 3 + values[turn * 16 + j] for j, a in enumerate(acc)]
    assert ints(buffers["param1"], 16) == acc
    assert sum(groups) > 0  # threads were parked, and looked at


@needs_nvdisasm
def test_two_waits_on_two_flags_each_end_when_their_own_flag_is_set(tmp_path: Path) -> None:
    values = [11 * i - 300 for i in range(64)]
    kt, buffers = run("sw_two_waits", 128, (1, 1, 1), (given(tmp_path, values),))
    out = ints(buffers["param1"], 128)
    # warp 3 wrote in[i] * 2 and in[32 + i] * 7; warps 2 and 1 copied them, plus and minus 1
    assert out[64:96] == [v * 2 for v in values[:32]]
    assert out[96:128] == [v * 7 for v in values[32:]]
    assert out[:32] == [v * 2 + 1 for v in values[:32]]
    assert out[32:64] == [v * 7 - 1 for v in values[32:]]
    assert ints(buffers["param2"], 2) == [1, 1]
    assert kt.wait_note is not None and "yielded" in kt.wait_note


@needs_nvdisasm
def test_serial_split_k_adds_every_slice_in_order_over_the_whole_grid(tmp_path: Path) -> None:
    rng = np.random.default_rng(29)
    values = rng.integers(-1000, 1000, size=SLICES * N).tolist()
    kt, buffers = run("sw_splitk", N, (1, 1, SLICES), (given(tmp_path, values),))
    # block z adds in[z*N + (t+1) % N] * (z+1) to out[t], in turn
    expected = [sum(values[z * N + (t + 1) % N] * (z + 1) for z in range(SLICES)) for t in range(N)]
    assert ints(buffers["param1"], N) == expected
    assert ints(buffers["param2"], 1) == [SLICES]  # the last block handed the turn on
    # each block: 4 warps store part[] once and read it once, one request each
    assert kt.totals["store"].requests == SLICES * 4
    assert kt.totals["load"].requests == SLICES * 4
    assert kt.launch.blocks_traced == SLICES


@pytest.mark.slow  # 5-8 s: make test-slow (CI) runs it
@needs_nvdisasm
def test_split_k_blocks_traced_by_the_command_line_sum_to_each_block_s_totals() -> None:
    def per_op(blocks: int) -> str:
        grid = f"1,1,{blocks}"
        args = ["trace", str(CUBIN), "--kernel", "sw_splitk", "-b", str(N), "--grid", grid]
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 0, res.output
        assert "Traceback" not in res.output
        return " ".join(res.output.split())

    # a block: its 4 warps store part[] once and read it once, a request of one wavefront each
    alone = per_op(1)
    assert "load 4 4 4 0" in alone and "store 4 4 4 0" in alone
    assert "out of launch order" not in alone
    # 64 blocks: 64 times as many; the blocks run first (spread over the grid) waited
    text = per_op(64)
    assert "load 256 256 256 0" in text and "store 256 256 256 0" in text
    assert "blocks ran out of launch order" in text and "'flag'+0x0" in text


@pytest.mark.slow
@needs_nvdisasm
def test_blocks_that_wait_on_later_blocks_run_them_first(tmp_path: Path) -> None:
    blocks = 8
    values = [(5 * i) % 17 - 8 for i in range(blocks * 64)]
    kt, buffers = run("sw_reverse", 64, (blocks, 1, 1), (given(tmp_path, values),))
    expected = [0] * 64
    for b in reversed(range(blocks)):  # block gridDim.x - 1 goes first, block 0 last
        expected = [e * 3 + values[b * 64 + 63 - t] for t, e in enumerate(expected)]
    assert ints(buffers["param1"], 64) == expected
    assert ints(buffers["param2"], 1) == [blocks]
    assert kt.launch.blocks_traced == blocks
    # the command line: block 0 runs first, watched, and waits while the others run; it
    # stands for itself alone (no class claims the blocks that ran meanwhile)
    args = ["trace", str(CUBIN), "--kernel", "sw_reverse", "-b", "64", "--grid", str(blocks)]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "behaves alike" not in text and "blocks ran out of launch order" in text
    # part[] is stored and read once a warp: 8 blocks x 2 warps (the spin's s_turn accesses
    # count its iterations, which depend on the order the blocks ran in)
    assert "spinwait.cu:115 STS [R5], R2 store (4 B) 16 16 16 0" in text
    assert "spinwait.cu:123 LDS R5, [R4] load (4 B) 16 16 16 0" in text


@needs_nvdisasm
def test_blocks_set_aside_are_bounded_by_the_state_they_hold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(waiting_blocks, "HELD_BYTES", 1)  # no batch may be set aside
    args = ["trace", str(CUBIN), "--kernel", "sw_splitk", "-b", str(N), "--grid", "1,1,64"]
    res = CliRunner().invoke(main, args)
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and "Traceback" not in text, text
    # other blocks may end the wait: "can never end" would be wrong
    assert "waits on memory that blocks not run yet may write" in text
    assert "can never end" not in text and "no more batches are set aside" in text
    assert "trace fewer blocks (--grid)" in text


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize("blocks", [1, 4])
def test_a_flag_no_thread_sets_is_still_a_deadlock(blocks: int) -> None:
    threads = threading.active_count()
    with pytest.raises(ShmemError, match="can never end") as caught:
        run("sw_deadlock", 64, (blocks, 1, 1))
    assert threading.active_count() == threads  # the batches' threads were joined
    said = str(caught.value)
    assert "'param0'+0x0 (4 bytes, holding 0x0)" in said
    # its text says how to give the data (--arg NAME=@FILE): no note on parameters left at 0
    assert said.endswith("give the memory it waits on (--arg NAME=@FILE)")
    assert caught.value.gives_data  # type: ignore[attr-defined]
    if blocks > 1:
        assert "no other block of the 4 wrote it" in said
    res = CliRunner().invoke(
        main, ["trace", str(CUBIN), "--kernel", "sw_deadlock", "-b", "64", "--grid", str(blocks)]
    )
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "spinwait.cu:" in res.output and "can never end" in res.output


@pytest.mark.slow  # 5-8 s: make test-slow (CI) runs it
@needs_nvdisasm
def test_the_launch_budget_counts_blocks_run_while_others_wait() -> None:
    """sw_splitk over 64 blocks runs 673,781 thread-instructions in all, most of them in
    blocks run while others were set aside: a budget below that stops it, whichever batch
    passes it (the budget once counted each batch from where the launch stood when it
    began, so 600,000 let the whole launch through)."""

    def trace(budget: int) -> tuple[int, str]:
        args = ["trace", str(CUBIN), "--kernel", "sw_splitk", "-b", str(N), "--grid", "1,1,64"]
        res = CliRunner().invoke(main, [*args, "--max-launch-instructions", str(budget)])
        return res.exit_code, " ".join(res.output.split())

    code, text = trace(600_000)
    assert code == 2 and "Traceback" not in text, text
    assert "(the budget is 600,000)" in text and "--max-launch-instructions" in text
    assert trace(700_000)[0] == 0


def relay_rows(values: list[int], blocks: int) -> list[list[int]]:
    """sw_relay's out, row by row, from its source: row b is in's row b times (b + 1); in
    the relay (b < blocks / 2) plus the row of the block it waited on (block 0: the last)."""
    rows = [[values[b * 64 + t] * (b + 1) for t in range(64)] for b in range(blocks)]
    for b in range(blocks // 2):  # in the relay's order: block 0 first, after the last block
        before = rows[blocks - 1] if b == 0 else rows[b - 1]
        rows[b] = [v + w for v, w in zip(rows[b], before, strict=True)]
    return rows


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize("alone", [False, True])
def test_blocks_set_aside_resume_in_the_order_their_memory_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, alone: bool
) -> None:
    """Block 0 waits on the last block, block 1 on block 0 (after its wait), block 2 on
    block 1...: the blocks are set aside 0, 1, 2 (a batch each where ``alone``) and resume in
    that order (a batch set aside once resumed only after every batch set aside after it:
    block 0 could not resume before block 1, which waits on it, and the trace stopped as if
    deadlocked)."""
    if alone:
        monkeypatch.setattr(grids, "BATCH_THREADS", 64)  # a block a batch
    blocks = 8
    values = [(13 * i) % 29 - 14 for i in range(blocks * 64)]
    kt, buffers = run("sw_relay", 64, (blocks, 1, 1), (given(tmp_path, values),))
    out = ints(buffers["param1"], blocks * 64)
    assert [out[b * 64 : b * 64 + 64] for b in range(blocks)] == relay_rows(values, blocks)
    assert ints(buffers["param2"], blocks // 2 + 1) == [1] * (blocks // 2 + 1)
    assert kt.launch.blocks_traced == blocks
    assert kt.wait_note is not None and "blocks ran out of launch order" in kt.wait_note
    if alone:  # blocks 0, 1, 2 and 3 were each set aside
        assert "4 time(s) a batch of blocks waited" in kt.wait_note


@needs_nvdisasm
def test_a_relay_traced_by_the_command_line_runs_every_block_once() -> None:
    args = ["trace", str(CUBIN), "--kernel", "sw_relay", "-b", "64", "--grid", "16"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "Traceback" not in text and "blocks ran out of launch order" in text


@needs_nvdisasm
def test_an_interrupt_while_blocks_wait_joins_every_batch_s_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while block 0 waits and the blocks after it run, a thread each: the interrupt
    goes on to the caller, and no thread of the trace is left running."""
    monkeypatch.setattr(grids, "BATCH_THREADS", 64)  # a block a batch
    silent, sent = execute._Run.silent, []

    def interrupted(self: execute._Run, batch: grids.Batch, quiet: bool) -> None:
        if batch.clusters == (2,):  # blocks 0 and 1 wait: block 2 is interrupted
            sent.append(threading.current_thread().name)
            os.kill(os.getpid(), signal.SIGINT)
        silent(self, batch, quiet)

    monkeypatch.setattr(execute._Run, "silent", interrupted)
    threads = threading.active_count()
    values = list(range(8 * 64))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # (as a shell's)
    try:
        with pytest.raises(KeyboardInterrupt):
            run("sw_relay", 64, (8, 1, 1), (given(tmp_path, values),))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert sent and sent[0] != threading.current_thread().name  # it ran on its own thread
    assert threading.active_count() == threads


def test_a_wait_message_names_the_buffer_and_offset_of_each_place() -> None:
    # describe_bytes finds each place's buffer by GlobalMemory.holder, the sorted look-up the
    # memory ops make: buffers added in address order, a shadow region (--memory) below them
    # added last, and an address in the unmapped gap between two buffers
    memory = GlobalMemory()
    a = memory.add_buffer(bytes(range(16)), "a")
    b = memory.add_buffer(bytes(range(100, 164)), "b")
    host = 0x7F00_0000_1000
    memory.preload(host, bytes([0xEF, 0xBE, 0xAD, 0xDE]), "--memory")
    places = [b + 8, b + 9, b + 10, b + 11, a + 2, host, host + 1, host + 2, host + 3]
    said = parking.describe_bytes(memory, sorted(places))
    # runs by address: the shadow (lowest), then 'a', then 'b'; bytes are little-endian
    assert said == (
        "0x7f0000001000 (4 bytes, holding 0xdeadbeef), 'a'+0x2 (1 byte, holding 0x2), "
        "'b'+0x8 (4 bytes, holding 0x6f6e6d6c)"  # bytes 108..111
    )
    gap = a + 16 + 256  # past 'a''s end, far short of 'b''s start
    assert parking.describe_bytes(memory, [gap, gap + 1]) == f"0x{gap:x} (2 bytes)"
    assert parking.describe_bytes(memory, [b + 63]) == "'b'+0x3f (1 byte, holding 0xa3)"
    assert parking.describe_bytes(memory, [b + 64]) == f"0x{b + 64:x} (1 byte)"
