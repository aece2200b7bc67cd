"""The mbarrier arrive forms that expect or complete transaction bytes, arrive a count, or
drop out (tests/data/trace/mbarrier_forms: the project's own kernel; the PTX ISA's
``mbarrier.expect_tx``, ``complete_tx``, ``arrive`` with a count and ``arrive_drop``).

CUTLASS 3.x's epilogue pipeline expects its C tile's bytes with ``expect_tx`` alone
(``SYNCS.ARRIVE.TRANS64.RED.A0TR``) and then arrives with the producer warp's 32 threads: the
emulator took the ``A0TR`` for one more arrival, so a barrier of 32 arrivals completed one
phase too many every 32 uses, and a persistent GEMM that loaded C 128 times in one CTA
(32 tiles of 4 subtiles) ended in a deadlock its hardware does not have.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.state import GlobalMemory

from .conftest import TRACE_DATA, needs_nvdisasm
from .trace_util import functions, one_block

pytestmark = needs_nvdisasm

CUBIN = TRACE_DATA / "mbarrier_forms" / "mbarrier_forms.sm_90a.cubin"
ROUNDS = 40  # more phases than any of the barriers expects arrivals


def _run(form: int, tx: int, count: int) -> tuple[execute.Trace, np.ndarray]:
    fn = functions(CUBIN)["_Z14mbarrier_formsPiiiii"]
    mem = GlobalMemory()
    out = mem.add_buffer(33 * 4, "out")
    params = struct.pack("<Qiiii", out, form, ROUNDS, tx, count)
    # 264 B of static shared memory (the barrier, the log), after the 1 KiB sm_90 reserves
    run = one_block(params, mem, 64, 264)
    trace = execute.run(fn, run)
    return trace, np.frombuffer(mem.read("out"), dtype=np.int32)


@pytest.mark.parametrize(
    "form,tx,count",
    [(0, 16, 1), (1, 0, 3), (2, 0, 2)],
    ids=["expect-complete-tx", "arrive-count", "arrive-drop"],
)
def test_every_round_completes_one_phase(form: int, tx: int, count: int) -> None:
    """Each round completes the barrier's phase once: expect_tx (``A0TR``) and complete_tx
    (``A0TX``) arrive with nobody, an arrive of 3 (``ART0``) is three arrivals and no bytes,
    and warp 1's arrive_drop (``OPTOUT``) leaves warp 0's one arrival to complete every
    later phase. Warp 0 logs each round with one shared store (one request: 40 in all)."""
    trace, out = _run(form, tx, count)
    stores = [r for r in trace.records if r.kind.op == "store"]
    assert sum(r.n for r in stores) == ROUNDS
    assert out[0] == ROUNDS
    assert out[1:].tolist() == [ROUNDS - 1] * 32  # the last round's log, read back
