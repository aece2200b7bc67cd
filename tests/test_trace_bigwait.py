"""A block that waits on another in a batch whose state passes the repeat check's bound
(budget.REPEAT_BYTES; sync/waiting_blocks.py, and sync/spin_loops.py, may_wait).

The kernel is the project's own: tests/data/trace/bigwait/kernels.cu (``bw_fixup``, 1,024
threads of 256 registers and 224 KiB of dynamic shared memory a block). Every block sums
``b + 1`` rows of its shared memory; block 30 first waits for a flag block 80 sets after
its sum, and adds block 80's sum to its own. The grid's blocks all differ (their loops run
``b + 1`` times), so blocks 0-20 run watched in rounds of 1, 4 and 16, 8 probe the pace,
and the rest run in batches: 64 of those (the most of 1,024 threads a batch holds) keep
about 104 MiB of state, past the bound, so the spin of block 30 was never proven and the
trace ran to its time limit, as a stream-K GEMM's fixup did (CUTLASS, 132 blocks of 384
threads and 225 KiB). ``bw_weak`` is the same with the waiter spinning on a weak load
(``ld.global.u32`` in an ``asm volatile``, a ``__nanosleep`` in the loop) and no fence, no
atomic, no strong load anywhere: only its loop says the grid may wait (may_wait's rule: a
loop left on a value read from global memory inside it); before that rule its batches were
not held to the bound and the trace ran to its limit. Expected values come from the kernel's
source and the inputs.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda.sass import Function
from shmem_cli.trace.emulator.budget import Budget
from shmem_cli.trace.emulator.decode import decode_function
from shmem_cli.trace.emulator.state import GlobalMemory
from shmem_cli.trace.emulator.sync.spin_loops import may_wait
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.tracer import find_function, trace_kernel

from .conftest import HANG_S, TRACE_DATA, needs_nvdisasm
from .test_trace_measured import cubin

CUBIN = TRACE_DATA / "bigwait" / "bigwait.sm_90a.cubin"
N = 1024  # threads a block
BLOCKS = 96
SLOTS = 56  # rows the dynamic shared memory holds: 56 x 1,024 ints
SMEM = SLOTS * N * 4  # 229,376 bytes
WAITER, SETTER = 30, 80
LIMIT_S = 60.0  # before the fix: the whole limit, then an error naming block (30,0,0)


def values() -> list[int]:
    return [(7 * t) % 23 - 11 for t in range(N)]


def given(tmp_path: Path) -> str:
    path = tmp_path / "in.bin"
    path.write_bytes(np.asarray(values(), dtype=np.int32).tobytes())
    return str(path)


def sums(data: list[int]) -> list[list[int]]:
    """Each block's row of out, as the kernel's source defines it."""
    rows = []
    for b in range(BLOCKS):
        last = {i % SLOTS: i for i in range(b + 1)}  # the row each slot holds at the end
        rows.append(
            [sum(data[N - 1 - t] + b + last[i % SLOTS] for i in range(b + 1)) for t in range(N)]
        )
    rows[WAITER] = [w + s for w, s in zip(rows[WAITER], rows[SETTER], strict=True)]
    return rows


@needs_nvdisasm
@pytest.mark.parametrize("name", ["bw_fixup", "bw_weak"])
def test_a_block_waits_on_a_later_one_in_batches_past_the_repeat_bound(
    tmp_path: Path, name: str
) -> None:
    info, disassembly = cubin(CUBIN)
    k = find_kernel(info, name)
    args = (f"0=@{given(tmp_path)}", f"3={WAITER}", f"4={SETTER}", f"5={SLOTS}")
    plan = plan_launch(
        k, kernel_params(k, None), block=(N, 1, 1), grid=(BLOCKS, 1, 1), args=args,
        dynamic_smem=SMEM,
    )  # fmt: skip
    memory = GlobalMemory()
    start = time.monotonic()
    function = find_function(disassembly, k, info.path)
    kt = trace_kernel(function, k, info.arch, plan, memory=memory, budget=Budget(seconds=LIMIT_S))
    assert time.monotonic() - start < HANG_S
    out = np.frombuffer(memory.read("param1")[: 4 * N * BLOCKS], dtype=np.int32)
    assert out.reshape(BLOCKS, N).tolist() == sums(values())
    assert np.frombuffer(memory.read("param2")[:4], dtype=np.int32).tolist() == [1]
    assert kt.launch.blocks_traced == BLOCKS


@needs_nvdisasm
def test_the_command_line_counts_every_row_of_every_block(tmp_path: Path) -> None:
    args = ["trace", str(CUBIN), "-k", "bw_fixup", "-b", str(N), "--grid", str(BLOCKS)]
    args += ["--dynamic-smem", str(SMEM), "--arg", f"in=@{given(tmp_path)}"]
    args += ["--arg", f"waiter={WAITER}", "--arg", f"setter={SETTER}", "--arg", f"slots={SLOTS}"]
    res = CliRunner().invoke(main, [*args, "--time-limit", str(LIMIT_S), "--no-tables"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    # a row stored and one read a warp per loop turn: 32 warps x (1 + 2 + ... + 96)
    rows = 32 * BLOCKS * (BLOCKS + 1) // 2
    assert f"load {rows:,} {rows:,} {rows:,} 0" in text
    assert f"store {rows:,} {rows:,} {rows:,} 0" in text
    assert "block (30,0,0) waited on 'flag'+0x0" in text


def _may_wait(function: Function) -> bool:
    return may_wait(function, decode_function(function).destinations)


@needs_nvdisasm
def test_code_that_may_wait_leaves_a_loop_on_a_read_inside_it() -> None:
    info, disassembly = cubin(CUBIN)
    acquire = find_function(disassembly, find_kernel(info, "bw_fixup"), info.path)
    assert _may_wait(acquire)  # ld.acquire: LDG.E.STRONG.GPU, its loop left on the value
    # a weak ld.global (LDG.E) in a loop kept by a __nanosleep, a weak store, no fence: none
    # of the marks of a read made afresh, the loop alone says it
    weak = find_function(disassembly, find_kernel(info, "bw_weak"), info.path)
    names = [i.name for i in weak.instructions]
    assert "LDG.E" in names and "NANOSLEEP" in names
    assert not [n for n in names if n.startswith(("ATOM", "MEMBAR", "CCTL", "FENCE", "RED"))]
    assert not [n for n in names if "STRONG" in n or "VOLATILE" in n]
    assert _may_wait(weak)
    # a warp spinning on a volatile shared flag another warp sets (a batch past the bound
    # could not prove that spin either)
    info, disassembly = cubin(TRACE_DATA / "spinwait" / "spinwait.sm_90.cubin")
    shared = find_function(disassembly, find_kernel(info, "sw_handoff_shared"), info.path)
    assert _may_wait(shared)
    # loops over data that end by a count (loads in them, strided), none that reads a flag
    plain = TRACE_DATA / "basics.sm_90.cubin"
    info, disassembly = cubin(plain)
    for kernel in info.kernels:
        function = find_function(disassembly, kernel, info.path)
        assert not _may_wait(function), kernel.name
