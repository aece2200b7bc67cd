"""Batches run only for what they write (sync/waiting_blocks.py): blocks counted by class that
a waiting block needs run, "silent", and keep no records (recorder.Dropping). Their records
were kept whole before, never folded: a long one stopped the trace at the records' bound.

tests/data/trace/persistent/lastwaits.cu: every block but the last is one class; the last
waits on a flag the block before it sets, so the blocks of the class run again, silent, until
that one has. By hand, from its source: each turn of the loop, each of a block's 8 warps
stores 16 rows of 32 floats and loads 16 back, 1 wavefront each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shmem_cli.trace import recorder
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.pipeline import TraceRequest, trace_file

from .conftest import TRACE_DATA, needs_nvdisasm

CUBIN = TRACE_DATA / "persistent" / "lastwaits.sm_90.cubin"


@needs_nvdisasm
def test_blocks_run_for_what_they_write_keep_no_records(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[recorder.Dropping] = []
    calls: list[int] = []

    class Spy(recorder.Dropping):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            made.append(self)

        def record(self, *args: Any, **kw: Any) -> None:
            calls.append(1)
            super().record(*args, **kw)

    monkeypatch.setattr(execute, "Dropping", Spy)
    blocks, turns = 64, 2
    args = (f"iters={turns}", f"out+0=zeros:{blocks * 1024}", f"flags+0=zeros:{blocks * 4}")
    request = TraceRequest(
        Path(CUBIN), kernel="lastwaits", block=(32, 8, 1), grid=(blocks, 1, 1), args=args
    )
    k = trace_file(request).kernels[0]
    assert made and calls  # blocks ran silent, and their shared requests came to nothing
    kept = [(r.by_index, r.allowance.taken, r.requests, r.fills, r.tainted) for r in made]
    assert all(k == ({}, 0, 0, {}, {}) for k in kept)
    assert k.wait_note is not None and "blocks ran out of launch order" in k.wait_note
    each = blocks * 8 * 16 * turns  # per op: every block's warps, 16 a turn
    totals = {a.op: (0, 0) for a in k.accesses}
    for a in k.accesses:
        req, wav = totals[a.op]
        totals[a.op] = (req + a.cost.totals.requests, wav + a.cost.totals.wavefronts)
    assert totals == {"store": (each, each), "load": (each, each)}
