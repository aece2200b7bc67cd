"""The threads of batches that take turns (sync/turns.py, issue 29): signals that land in
their hand-offs, the memory their stacks take, and a thread that cannot start.

A signal's handler runs in the main thread between two of its bytecodes: a Ctrl-C (or a
SIGTERM) may come while the thread that owns the trace hands a batch's thread the turn,
starts one, or joins one, not only while it waits. Each test raises the interrupt there,
as the handler would, in a trace of the project's own ``sw_relay`` (8 blocks, a block a
batch: blocks 1-7 run on threads of their own, blocks 1-3 wait and resume), and checks that
the interrupt goes on and that every thread of the trace ended. The trace runs on a thread
of the test's own (its owner), so that a hand-off lost for ever fails the test, not the run.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.plumbing.interrupts import Terminated
from shmem_cli.trace.emulator import grid as grids
from shmem_cli.trace.emulator.sync import turns

from .conftest import HANG_S, needs_nvdisasm
from .test_trace_spinwait import CUBIN, given, relay_rows, run


class _CutShort(threading.Semaphore):
    """A semaphore whose ``nth`` release is cut short by Ctrl-C before it releases (the
    handler runs as ``release`` is entered)."""

    def __init__(self, nth: int) -> None:
        super().__init__(0)
        self.nth, self.calls = nth, 0

    def release(self, n: int = 1) -> None:
        self.calls += 1
        if self.calls == self.nth:
            raise KeyboardInterrupt
        super().release(n)


def _batch_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("shmem-batch-")]


def _traced_on_a_thread(tmp_path: Path) -> BaseException | None:
    """Trace sw_relay, a block a batch, on a thread of its own; what it raised (None:
    nothing). Fails where the trace has not ended within HANG_S."""
    caught: list[BaseException] = []

    def body() -> None:
        try:
            run("sw_relay", 64, (8, 1, 1), (given(tmp_path, list(range(8 * 64))),))
        except BaseException as exc:  # handed to the test
            caught.append(exc)

    owner = threading.Thread(target=body, name="test-owner", daemon=True)
    owner.start()
    owner.join(HANG_S)
    assert not owner.is_alive(), "the trace never ended: a batch's turn was lost"
    return caught[0] if caught else None


@pytest.fixture
def one_block_a_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(grids, "BATCH_THREADS", 64)
    assert _batch_threads() == []


@needs_nvdisasm
@pytest.mark.usefixtures("one_block_a_batch")
@pytest.mark.parametrize("nth", [1, 2])  # block 1's thread started; resumed after its wait
def test_an_interrupt_as_a_batch_is_handed_the_turn_ends_every_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nth: int
) -> None:
    """The owner had marked block 1's thread as the one running when the interrupt came,
    before it let it go: that thread waited for a turn that never came, and the owner waited
    for it to stop running, for ever (Ctrl-C again was swallowed)."""
    made = turns.Turn.__init__

    def cut(self: turns.Turn, body: Callable[[], None], name: str) -> None:
        made(self, body, name)
        if name == "shmem-batch-1":
            self.go = _CutShort(nth)

    monkeypatch.setattr(turns.Turn, "__init__", cut)
    assert isinstance(_traced_on_a_thread(tmp_path), KeyboardInterrupt)
    assert _batch_threads() == []


@needs_nvdisasm
@pytest.mark.usefixtures("one_block_a_batch")
def test_an_interrupt_as_a_batch_s_thread_starts_is_the_interrupt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interrupt came in Thread.start before block 2's thread started: joining it raised
    RuntimeError ('cannot join thread before it is started'), a traceback and status 1
    instead of Ctrl-C's 130, and the threads after it in the list were never joined."""
    start = threading.Thread.start

    def cut(self: threading.Thread) -> None:
        if self.name == "shmem-batch-2":
            raise KeyboardInterrupt
        start(self)

    monkeypatch.setattr(threading.Thread, "start", cut)
    assert isinstance(_traced_on_a_thread(tmp_path), KeyboardInterrupt)
    assert _batch_threads() == []


@needs_nvdisasm
@pytest.mark.usefixtures("one_block_a_batch")
def test_a_sigterm_while_the_threads_are_joined_goes_on_once_all_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C as block 3's thread would start, then SIGTERM (shmem's handler raises
    Terminated, a SystemExit) while the owner joins block 1's: it went on at once, leaving
    block 2's thread waiting for ever; it goes on once every thread is joined."""
    start, join, said = threading.Thread.start, threading.Thread.join, []

    def cut(self: threading.Thread) -> None:
        if self.name == "shmem-batch-3":
            raise KeyboardInterrupt
        start(self)

    def joined(self: threading.Thread, timeout: float | None = None) -> None:
        if self.name.startswith("shmem-batch-") and not said:
            said.append(self.name)
            raise Terminated
        join(self, timeout)

    monkeypatch.setattr(threading.Thread, "start", cut)
    monkeypatch.setattr(threading.Thread, "join", joined)
    caught = _traced_on_a_thread(tmp_path)
    assert said == ["shmem-batch-1"]
    assert isinstance(caught, Terminated) and caught.code == 143
    assert _batch_threads() == []


@needs_nvdisasm
@pytest.mark.usefixtures("one_block_a_batch")
def test_an_interrupt_while_an_ended_batch_s_thread_is_joined_is_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C as the owner joins block 4's thread, which ran to its end: the join went on
    (as it must) and the interrupt was dropped, the trace running on to its end."""
    join, said = threading.Thread.join, []

    def joined(self: threading.Thread, timeout: float | None = None) -> None:
        if self.name == "shmem-batch-4" and not said:
            said.append(self.name)
            raise KeyboardInterrupt
        join(self, timeout)

    monkeypatch.setattr(threading.Thread, "join", joined)
    assert isinstance(_traced_on_a_thread(tmp_path), KeyboardInterrupt)
    assert said == ["shmem-batch-4"]
    assert _batch_threads() == []


#: sw_relay over 4 blocks, then over 16, a block a batch (blocks 1-7 wait on threads of their
#: own), under a memory limit of what the process held after the first and 48 MiB: the words
#: of the second's ``out``, in hex
_UNDER_A_LIMIT = """
import resource, sys
from pathlib import Path
from shmem_cli.cuda import toolchain
from shmem_cli.trace.emulator import grid as grids
from shmem_cli.trace.emulator.state import GlobalMemory
from shmem_cli.trace.kernel.cubin import find_kernel, read_cubin
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.tracer import find_function, trace_kernel

grids.BATCH_THREADS = 64
cubin = Path(sys.argv[1])
info = read_cubin(cubin)
kernel = find_kernel(info, "sw_relay")
function = find_function(toolchain.disassemble(cubin), kernel, info.path)

def trace(blocks):
    grid, args = (blocks, 1, 1), (sys.argv[2],)
    plan = plan_launch(kernel, kernel_params(kernel, None), block=(64, 1, 1), grid=grid, args=args)
    memory = GlobalMemory()
    trace_kernel(function, kernel, info.arch, plan, memory=memory)
    return memory.read("param1")[: blocks * 64 * 4]

trace(4)
held = int(Path("/proc/self/statm").read_text().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (held + (48 << 20), held + (48 << 20)))
print(trace(16).hex())
"""


@pytest.mark.slow  # 6-7 s: make test-slow (CI) runs it
@needs_nvdisasm
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/statm")
def test_batches_set_aside_under_a_memory_limit_take_little_address_space(
    tmp_path: Path,
) -> None:
    """Each batch's thread reserved the platform's default stack (8 MiB on Linux): 7 batches
    set aside at once took 56 MiB of address space, and under a memory limit (ulimit -v) 48
    MiB above what the process held the trace ended in 'RuntimeError: can't start new
    thread'. Their stacks are turns.STACK_BYTES (1 MiB) now."""
    values = [(7 * i) % 31 - 15 for i in range(16 * 64)]
    done = subprocess.run(
        [sys.executable, "-c", _UNDER_A_LIMIT, str(CUBIN), given(tmp_path, values)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = np.frombuffer(bytes.fromhex(done.stdout.strip()), dtype=np.int32).tolist()
    assert out == [v for row in relay_rows(values, 16) for v in row]


@pytest.mark.slow  # 3-4 s: make test-slow (CI) runs it
@needs_nvdisasm
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/self/status")
def test_batches_set_aside_share_one_memory_arena(tmp_path: Path) -> None:
    """glibc gave each batch's thread a memory arena of its own (64 MiB of address space
    reserved each): the 16-block relay, a block a batch, peaked at 782 MB of address space
    where its blocks hold 50 MB. The threads share one arena now (turns._one_arena): the
    16-block trace adds less than 100 MiB to the peak of the 4-block one."""
    values = [(7 * i) % 31 - 15 for i in range(16 * 64)]
    script = _UNDER_A_LIMIT.replace(
        "resource.setrlimit(resource.RLIMIT_AS, (held + (48 << 20), held + (48 << 20)))",
        "peak = lambda: int(Path('/proc/self/status').read_text().split('VmPeak:')[1].split()[0])"
        "\nbefore = peak()",
    ).replace("print(trace(16).hex())", "trace(16)\nprint(peak() - before)")
    done = subprocess.run(
        [sys.executable, "-c", script, str(CUBIN), given(tmp_path, values)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) < 100 << 10, done.stdout  # kB


@needs_nvdisasm
@pytest.mark.usefixtures("one_block_a_batch")
def test_a_batch_s_thread_that_cannot_start_is_said_in_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No thread left to start (a limit on processes, or no memory for its stack): the
    RuntimeError was a traceback and status 1; it is the trace's error now, status 2."""
    start = threading.Thread.start

    def refused(self: threading.Thread) -> None:
        if self.name == "shmem-batch-3":
            raise RuntimeError("can't start new thread")
        start(self)

    monkeypatch.setattr(threading.Thread, "start", refused)
    args = ["trace", str(CUBIN), "--kernel", "sw_relay", "-b", "64", "--grid", "8"]
    res = CliRunner().invoke(main, args)
    text = " ".join(res.output.split())
    assert res.exit_code == 2 and "Traceback" not in text, text
    assert "no thread could be started (can't start new thread: a memory limit" in text
    assert "raise the limit, or trace fewer blocks (--grid)" in text
    assert _batch_threads() == []


def _deep(depth: int, x: int) -> int:
    """sw_deep's deep(depth, x), from its source: the arguments go down, then each level
    doubles what the next returned and subtracts its depth (unsigned, modulo 2^32)."""
    for _ in range(depth):
        x = (x * 3 + 1) % 2**32
    for d in range(1, depth + 1):
        x = (x * 2 - d) % 2**32
    return x


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.usefixtures("one_block_a_batch")
def test_a_deep_call_chain_runs_on_a_batch_s_thread(tmp_path: Path) -> None:
    """sw_deep: blocks 1-2 run 128 nested calls each on threads of their own (a stack of
    turns.STACK_BYTES) while block 0 waits: the kernel's calls are the emulator's data, not
    frames of its stack."""
    values = (np.arange(3 * 64, dtype=np.uint64) * 2654435761 % 2**32).tolist()
    given_in = tmp_path / "in.bin"
    given_in.write_bytes(np.asarray(values, dtype=np.uint32).tobytes())
    kt, buffers = run("sw_deep", 64, (3, 1, 1), (f"0=@{given_in}", "3=128"))
    out = np.frombuffer(buffers["param1"][: 3 * 64 * 4], dtype=np.uint32).tolist()
    assert out == [_deep(128, v) for v in values]
    assert ints_of(buffers["param2"]) == 1  # the last block set the flag block 0 waited on
    assert kt.wait_note is not None and "blocks ran out of launch order" in kt.wait_note


def ints_of(raw: bytes) -> int:
    return int(np.frombuffer(raw[:4], dtype=np.int32)[0])
