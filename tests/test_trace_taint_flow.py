"""Taint through control flow (trace/emulator/taint_flow.py): a guard, a branch or a loop
that global data decides marks the shared-memory instructions whose lanes or count it
decides, the registers its paths write carry the taint past the reconvergence, and the
report names only the buffers whose data went into a decision or an address.

The hand-written function below is the project's own (the shape nvcc gives an ``if`` and a
``while``: a ``BSSY``/``BSYNC`` pair, a branch back); the held-back kernel is issue 20's
``ev_filter`` (tests/data/trace/everyday/kernels/ev_branch.cu), measured on the H200 with
its data and with zeros.
"""

from __future__ import annotations

import json
import shlex
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda.sass import Function, parse
from shmem_cli.trace.api import trace
from shmem_cli.trace.emulator import execute, taint_flow
from shmem_cli.trace.emulator.access_kind import shared_op_of
from shmem_cli.trace.emulator.decode import decode_function
from shmem_cli.trace.emulator.state import BUFFER_GROUPS, TAINT_GLOBAL, GlobalMemory, Launch
from shmem_cli.trace.requests import InstructionRecords

from .conftest import ROOT, TRACE_DATA, needs_nvdisasm
from .test_trace_everyday import LAUNCHES, measured, per_instruction
from .test_trace_measured import traced

# taint(t) = a[t]; if (a[t] != 0) { s[t] = t; r7 = 4; } else r7 = 0;
# s[t + 128] = t; s[t + 256 + r7/4] = t; b[t] = r7; for (i = 0; i < a[t]; ++i) s[t + 512] = i;
FLOW_SASS = """
        .section        .text.taint_flow,"ax",@progbits
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   LDC.64 R4, c[0x0][0x210] ;
        /*0020*/                   ULDC.64 UR8, c[0x0][0x208] ;
        /*0030*/                   S2UR UR6, SR_CgaCtaId ;
        /*0040*/                   IMAD.WIDE R4, R0, 0x4, R4 ;
        /*0050*/                   LDG.E R3, desc[UR8][R4.64] ;
        /*0060*/                   UMOV UR4, 0x400 ;
        /*0070*/                   ULEA UR4, UR6, UR4, 0x18 ;
        /*0080*/                   LEA R2, R0, UR4, 0x2 ;
        /*0090*/                   IMAD.MOV.U32 R7, RZ, RZ, RZ ;
        /*00a0*/                   BSSY B0, `(.L_x_1) ;
        /*00b0*/                   ISETP.NE.AND P0, PT, R3, RZ, PT ;
        /*00c0*/              @!P0 BRA `(.L_x_0) ;
        /*00d0*/                   STS [R2], R0 ;
        /*00e0*/                   IMAD.MOV.U32 R7, RZ, RZ, 0x4 ;
.L_x_0:
        /*00f0*/                   BSYNC B0 ;
.L_x_1:
        /*0100*/                   STS [R2+0x200], R0 ;
        /*0110*/                   IMAD.IADD R8, R2, 0x1, R7 ;
        /*0120*/                   STS [R8+0x400], R0 ;
        /*0130*/                   LDC.64 R10, c[0x0][0x218] ;
        /*0140*/                   IMAD.WIDE R10, R0, 0x4, R10 ;
        /*0150*/                   STG.E desc[UR8][R10.64], R7 ;
        /*0160*/                   IMAD.MOV.U32 R9, RZ, RZ, RZ ;
.L_x_2:
        /*0170*/                   ISETP.GE.AND P1, PT, R9, R3, PT ;
        /*0180*/               @P1 BRA `(.L_x_3) ;
        /*0190*/                   STS [R2+0x800], R9 ;
        /*01a0*/                   VIADD R9, R9, 0x1 ;
        /*01b0*/                   BRA `(.L_x_2) ;
.L_x_3:
        /*01c0*/                   EXIT ;
"""
THREADS = 64
BUFFER_A = 8  # the first buffer's taint bit (state.py: bits 3-7 name the buffers)
BUFFER_B = 16


def flow_function() -> Function:
    return parse(FLOW_SASS)[0]


def run_flow(a: np.ndarray) -> tuple[dict[int, InstructionRecords], np.ndarray]:
    """Runs the function over one block of 64 threads with ``a`` (int32 per thread) as the
    first buffer; the records by pc, and the second buffer as written."""
    mem = GlobalMemory()
    addr_a = mem.add_buffer(a.astype(np.int32).tobytes(), "a")
    addr_b = mem.add_buffer(THREADS * 4, "b")
    launch = Launch(
        block=(THREADS, 1, 1),
        grid=(1, 1, 1),
        params=struct.pack("<QQ", addr_a, addr_b),
        param_base=0x210,
        static_smem=4096,
        dynamic_smem=0,
        shared_base=0x400,
        memory=mem,
    )
    tr = execute.run(flow_function(), launch)
    b = np.frombuffer(mem.read("b"), dtype=np.int32)
    return {r.instruction.pc: r for r in tr.records}, b


def test_post_dominators_close_a_branch_at_its_bsync_and_a_loop_at_its_exit() -> None:
    fn = flow_function()
    program = decode_function(fn)
    flow = taint_flow.ControlFlow(
        fn, program.destinations, [shared_op_of(i) for i in fn.instructions]
    )
    at = fn.index_of
    branch = flow.region(at(0xC0))
    assert branch.reconverge == at(0xF0)  # the BSYNC the skipped path jumps to
    assert branch.shared == (at(0xD0),)
    assert ("R", 7, 1) in branch.dests  # the value the decision chose
    loop = flow.region(at(0x180))  # leaves the loop: its threads meet again at the EXIT
    assert loop.reconverge == at(0x1C0)
    assert loop.shared == (at(0x190),)
    assert {("R", 9, 1), ("P", 1, 1)} <= loop.dests


def test_a_decision_on_data_marks_what_it_decides_and_nothing_after() -> None:
    a = np.arange(THREADS) % 2  # odd threads take the branch and go round the loop once
    recs, b = run_flow(a)
    np.testing.assert_array_equal(b, 4 * a)  # the values the emulator computed
    inside, after, through, loop = (recs[pc] for pc in (0xD0, 0x100, 0x120, 0x190))
    assert inside.n == 2 and inside.data_dependent[: inside.n].all()
    assert inside.decided == TAINT_GLOBAL | BUFFER_A
    assert after.n == 2 and not after.data_dependent[: after.n].any()
    assert (after.decided, after.sources) == (0, 0)
    # R7, written on one path of the branch, carries its decision past the BSYNC
    assert through.data_dependent[: through.n].all() and through.decided == 0
    assert through.sources == TAINT_GLOBAL | BUFFER_A
    assert loop.n == 2 and loop.data_dependent[: loop.n].all()
    assert loop.decided == TAINT_GLOBAL | BUFFER_A
    # b is written, never read into a decision: no record names it
    assert not any((r.sources | r.decided) & BUFFER_B for r in recs.values())


def test_a_decision_marks_the_instructions_it_skips() -> None:
    recs, _ = run_flow(np.zeros(THREADS, dtype=np.int32))
    inside, loop = recs[0xD0], recs[0x190]
    assert (inside.n, loop.n) == (0, 0)  # no thread ran them
    assert inside.decided == loop.decided == TAINT_GLOBAL | BUFFER_A
    assert recs[0x100].decided == 0
    # with zeros R7 is 0 everywhere, but the decision chose it: still data
    assert recs[0x120].data_dependent[: recs[0x120].n].all()


def test_without_data_nothing_is_decided() -> None:
    """The same branch on a value that is not global data (the thread index) decides
    nothing: the control-flow taint costs nothing there."""
    text = FLOW_SASS.replace("LDG.E R3, desc[UR8][R4.64]", "LOP3.LUT R3, R0, 0x1, RZ, 0xc0, !PT")
    fn = parse(text)[0]
    mem = GlobalMemory()
    launch = Launch(
        block=(THREADS, 1, 1),
        grid=(1, 1, 1),
        params=struct.pack("<QQ", mem.add_buffer(THREADS * 4, "a"), mem.add_buffer(256, "b")),
        param_base=0x210,
        static_smem=4096,
        dynamic_smem=0,
        shared_base=0x400,
        memory=mem,
    )
    tr = execute.run(fn, launch)
    assert [r.n for r in tr.records] == [2, 2, 2, 2]
    assert not any(r.decided or r.sources or r.data_dependent[: r.n].any() for r in tr.records)


def test_buffers_past_the_fourth_read_share_one_taint_bit() -> None:
    """Bits go to buffers in the order the kernel first reads them; one never read (an
    output) gets none, so the shared last bit never names it."""
    mem = GlobalMemory()
    names = [f"p{k}" for k in range(BUFFER_GROUPS + 3)]
    starts = {n: mem.add_buffer(64, n) for n in names}
    ins = flow_function().instructions[0]

    def read(*which: str) -> list[int]:
        offsets = mem.offsets(np.array([starts[n] for n in which], dtype=np.int64), 4, ins)
        return [int(x) for x in np.asarray(mem.read_taint(offsets, 4))]

    # bit 0 global data, bits 1 and 2 other meanings (inexact, differs between blocks)
    assert read("p3") == [TAINT_GLOBAL | 8]
    assert read("p0", "p3", "p1") == [TAINT_GLOBAL | 16, TAINT_GLOBAL | 8, TAINT_GLOBAL | 32]
    assert read("p5", "p6") == [TAINT_GLOBAL | 64, TAINT_GLOBAL | 128]
    assert read("p7", "p6", "p0") == [TAINT_GLOBAL | 128, TAINT_GLOBAL | 128, TAINT_GLOBAL | 16]
    assert mem.taint_sources(8 | 32) == [("p3",), ("p1",)]
    assert mem.taint_sources(128 | 4 | 2 | 1) == [("p6", "p7")]  # p2 and p4 never read
    assert mem.taint_sources(16 | 64) == [("p0",), ("p5",)]


# --- the held-back kernel: issue 20's filter, loop and compare-exchange ---------------------

# (pc, source line) of ev_filter's instructions whose lanes or count the data decide: the
# store under `if (flags[t])`, the loop over `keys[t] & 3`, the compare-exchange on the keys
DECIDED = {0x1E0: 11, 0x280: 12, 0x2B0: 12, 0x370: 17, 0x380: 17}
CUBIN = TRACE_DATA / "everyday" / "ev_branch.sm_90.cubin"


def _flagged(kernel: Any) -> dict[int, tuple[str, ...]]:
    return {a.pc: a.data_from for a in kernel.accesses if a.data_dependent}


@needs_nvdisasm
def test_the_data_dependent_branch_is_flagged_without_its_data() -> None:
    (file_trace,) = trace(CUBIN, block=(256, 1, 1)).files
    (kernel,) = file_trace.kernels
    assert kernel.launch.zero_filled == ("0 (out)", "1 (flags)", "2 (keys)")
    assert {a.pc: a.line for a in kernel.accesses if a.data_dependent} == DECIDED
    flagged = _flagged(kernel)
    assert flagged[0x1E0] == ("1 (flags)",)
    assert all(flagged[pc] == ("2 (keys)",) for pc in (0x280, 0x2B0, 0x370, 0x380))
    assert kernel.data_from == ("1 (flags)", "2 (keys)")  # never the output
    doc = json.loads(json.dumps(kernel.to_json()))
    assert doc["data_from"] == ["1 (flags)", "2 (keys)"]
    assert [x["pc"] for x in doc["accesses"] if x["data_dependent"]] == sorted(DECIDED)


@needs_nvdisasm
@pytest.mark.parametrize("launch_id", ["branch_data", "branch_zeros"])
def test_the_data_dependent_branch_is_exact_with_its_data(launch_id: str, tmp_path: Path) -> None:
    kernel = traced(LAUNCHES[launch_id], tmp_path, TRACE_DATA / "everyday")
    got = {pc: v for pc, v in per_instruction(kernel).items() if v[0]}
    assert got == measured(launch_id)  # the H200's warp executions and wavefronts
    assert set(_flagged(kernel)) == set(DECIDED)


@needs_nvdisasm
def test_the_excerpt_trace_md_shows_is_what_the_trace_prints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = (ROOT / "docs" / "trace.md").read_text(encoding="utf-8")
    command = (
        "$ shmem trace tests/data/trace/everyday/ev_branch.sm_90.cubin --block 256 --no-tables"
    )
    block = page[page.index(command) :].split("```", 1)[0].splitlines()[1:]
    shown = [line for line in block if line.strip() and line != "..."]
    assert len(shown) == 3
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, shlex.split(command)[2:])
    assert result.exit_code == 0, result.output
    printed = result.output.splitlines()
    for line in shown:
        assert line in printed


# Thread 0 alone reads a[0]; warp 0 ballots it, every lane stores bit 0 of its ballot at
# s[t]; after a barrier warp 1 reads s[t - 31] (lanes 1-31 of warp 0, and its own lane 0)
# and stores at an address made of it. Its addresses depend on a[0] through lanes that
# never read global memory themselves.
BALLOT_SASS = """
        .section        .text.ballot,"ax",@progbits
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   LDC.64 R4, c[0x0][0x210] ;
        /*0020*/                   ULDC.64 UR8, c[0x0][0x208] ;
        /*0030*/                   S2UR UR6, SR_CgaCtaId ;
        /*0040*/                   UMOV UR4, 0x400 ;
        /*0050*/                   ULEA UR4, UR6, UR4, 0x18 ;
        /*0060*/                   LEA R2, R0, UR4, 0x2 ;
        /*0070*/                   IMAD.MOV.U32 R3, RZ, RZ, RZ ;
        /*0080*/                   ISETP.NE.AND P1, PT, R0, RZ, PT ;
        /*0090*/              @!P1 LDG.E R3, desc[UR8][R4.64] ;
        /*00a0*/                   ISETP.NE.AND P0, PT, R3, RZ, PT ;
        /*00b0*/                   VOTE.ANY R6, PT, P0 ;
        /*00c0*/                   LOP3.LUT R6, R6, 0x1, RZ, 0xc0, !PT ;
        /*00d0*/                   STS [R2], R6 ;
        /*00e0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*00f0*/                   ISETP.GE.U32.AND P2, PT, R0, 0x20, PT ;
        /*0100*/              @!P2 EXIT ;
        /*0110*/                   IADD3 R9, R2, -0x7c, RZ ;
        /*0120*/                   LDS R7, [R9] ;
        /*0130*/                   LEA R8, R7, UR4, 0x2 ;
        /*0140*/                   STS [R8+0x100], R0 ;
        /*0150*/                   EXIT ;
"""


def test_a_ballot_carries_every_lanes_taint() -> None:
    fn = parse(BALLOT_SASS)[0]
    mem = GlobalMemory()
    launch = Launch(
        block=(THREADS, 1, 1),
        grid=(1, 1, 1),
        params=struct.pack("<Q", mem.add_buffer(struct.pack("<i", 1), "a")),
        param_base=0x210,
        static_smem=4096,
        dynamic_smem=0,
        shared_base=0x400,
        memory=mem,
    )
    recs = {r.instruction.pc: r for r in execute.run(fn, launch).records}
    ballot_stores, read, late = recs[0xD0], recs[0x120], recs[0x140]
    assert ballot_stores.n == 2 and not ballot_stores.data_dependent[:2].any()
    assert read.n == 1 and not read.data_dependent[:1].any()  # s[t - 31]: thread indices
    # warp 1's lanes 0-30 took warp 0's ballot of a[0] != 0 (bit 0 set): s[0] + 0x100
    assert late.n == 1 and late.data_dependent[0]
    assert late.sources == TAINT_GLOBAL | BUFFER_A
    assert (late.addr[0][:31] == 0x400 + 4 + 0x100).all()


# s[t] = 0; if (a[t] != 0) s[t] = t; __syncthreads(); s[128 + s[t]] = t: the last store's
# address is what the decision chose, whether the guarded store ran or not
SKIPPED_SASS = """
        .section        .text.skipped,"ax",@progbits
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   LDC.64 R4, c[0x0][0x210] ;
        /*0020*/                   ULDC.64 UR8, c[0x0][0x208] ;
        /*0030*/                   S2UR UR6, SR_CgaCtaId ;
        /*0040*/                   IMAD.WIDE R4, R0, 0x4, R4 ;
        /*0050*/                   LDG.E R3, desc[UR8][R4.64] ;
        /*0060*/                   UMOV UR4, 0x400 ;
        /*0070*/                   ULEA UR4, UR6, UR4, 0x18 ;
        /*0080*/                   LEA R2, R0, UR4, 0x2 ;
        /*0090*/                   STS [R2], RZ ;
        /*00a0*/                   ISETP.NE.AND P0, PT, R3, RZ, PT ;
        /*00b0*/               @P0 STS [R2], R0 ;
        /*00c0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*00d0*/                   LDS R7, [R2] ;
        /*00e0*/                   LEA R8, R7, UR4, 0x2 ;
        /*00f0*/                   STS [R8+0x200], R0 ;
        /*0100*/                   EXIT ;
"""


@pytest.mark.parametrize("data", ["zeros", "ones", "thread_index"])
def test_a_store_the_data_kept_off_leaves_its_decision_in_shared_memory(data: str) -> None:
    text = SKIPPED_SASS
    if data == "thread_index":  # the same guard on t & 1: nothing is decided by data
        text = text.replace(
            "ISETP.NE.AND P0, PT, R3, RZ, PT", "LOP3.LUT P0, RZ, R0, 0x1, RZ, 0xc0, !PT"
        )
    a = np.zeros(THREADS, dtype=np.int32) if data == "zeros" else np.ones(THREADS, dtype=np.int32)
    mem = GlobalMemory()
    launch = Launch(
        block=(THREADS, 1, 1),
        grid=(1, 1, 1),
        params=struct.pack("<Q", mem.add_buffer(a.tobytes(), "a")),
        param_base=0x210,
        static_smem=4096,
        dynamic_smem=0,
        shared_base=0x400,
        memory=mem,
    )
    recs = {r.instruction.pc: r for r in execute.run(parse(text)[0], launch).records}
    guarded, late = recs[0xB0], recs[0xF0]
    assert guarded.n == {"zeros": 0, "ones": 2, "thread_index": 2}[data]
    assert late.n == 2
    if data == "thread_index":
        assert not late.data_dependent[:2].any() and late.sources == 0
    else:
        assert late.data_dependent[:2].all()
        assert late.sources == TAINT_GLOBAL | BUFFER_A
