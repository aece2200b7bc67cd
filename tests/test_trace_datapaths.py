"""Decisions on global data that only choose register values (issue 30): nvcc's slow paths of
a float division and of ``sqrtf`` are subroutines called behind a branch on the operands, and
``__expf`` guards its fix-ups (``@!P0 FMUL``) by the operand, so a softmax- or layernorm-like
kernel's blocks take other paths where their data differ. The proof of alike blocks lets
such a decision through where every path up to where they meet computes registers only
(shmem_cli/trace/emulator/alike/watch.py, taint_flow.Region.values), and still refuses the
values it chose where they reach a shared address.

The kernels are tests/data/trace/datapaths/datapaths.cu. The reference is the same launch
with every block run (the tracer's path for a caller that reads global memory afterwards),
and the shared requests the source makes, counted by hand.
"""

from __future__ import annotations

import re
import struct
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.cuda.sass import Function, parse_instruction
from shmem_cli.cuda.sass_operands import Imm
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.access_kind import shared_op_of
from shmem_cli.trace.emulator.decode import decode_function, values_only
from shmem_cli.trace.emulator.state import GlobalMemory, Launch
from shmem_cli.trace.emulator.taint_flow import ControlFlow
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.tracer import find_function

from .conftest import TRACE_DATA, needs_nvdisasm
from .test_trace_grid import every_block, traced
from .test_trace_measured import cubin
from .trace_util import numbered

DATAPATHS = TRACE_DATA / "datapaths" / "datapaths.sm_90.cubin"
N = 128  # threads of a block, and a row's values (datapaths.cu)


def _rows(tmp_path: Path, rows: list[np.ndarray]) -> str:
    """The rows as the kernel's input buffer (float32, row after row): its --arg."""
    data = tmp_path / "rows.bin"
    np.asarray(rows, dtype=np.float32).tofile(data)
    return f"1=@{data}"


#: rows whose sum and quotients are normal floats (the division's fast path) and rows of
#: denormals (its slow path, and sqrtf's): the blocks take other paths
NORMAL, TINY = np.arange(N) + 1.0, np.full(N, 1e-42)
MIXED = np.where(np.arange(N) % 2 == 0, 1e-41, 3.0)


@needs_nvdisasm
@pytest.mark.parametrize(
    "rows",
    [
        [NORMAL, TINY, np.ones(N), MIXED],  # block 0 takes the fast paths
        [TINY, NORMAL, MIXED, np.ones(N)],  # block 0 takes the slow ones
    ],
)
def test_a_division_on_global_data_leaves_the_blocks_alike(
    tmp_path: Path, rows: list[np.ndarray]
) -> None:
    args = (_rows(tmp_path, rows),)
    by_class = traced(DATAPATHS, "dp_norm", N, (4, 1, 1), args)
    ran = every_block(DATAPATHS, "dp_norm", N, (4, 1, 1), args)
    cov = by_class.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 1 and cov.blocks == 4
    proof = cov.proof or ""
    assert "every block behaves alike" in proof
    assert "These data-dependent paths were proven not to touch shared memory" in proof
    assert "an estimate where the others take other paths" in proof
    # the division's and sqrtf's branches, and __expf's guarded fix-ups (@!P0 FMUL) at least
    chosen = re.search(r"decisions on global data at (\d+) instruction", proof)
    assert chosen is not None and int(chosen.group(1)) >= 4
    assert ran.launch.coverage is not None and ran.launch.coverage.mode == "whole"
    assert by_class.totals == ran.totals
    for a, b in zip(by_class.accesses, ran.accesses, strict=True):
        assert (a.site.pc, a.cost.totals, a.cost.lane_accesses, a.predicated_off) == (
            b.site.pc,
            b.cost.totals,
            b.cost.lane_accesses,
            b.predicated_off,
        )
    # the blocks did take other paths: the slow ones ran in some blocks and not in others
    assert by_class.instructions_executed != ran.instructions_executed
    # by hand, per block: part[tid] = v (4 warps); 7 steps of the tree, each read twice and
    # written once by the warps with a thread below s (2, 1, 1, ...); part[0] read by all 4
    steps = [-(-s // 32) for s in (64, 32, 16, 8, 4, 2, 1)]
    assert by_class.totals["store"].requests == 4 * (4 + sum(steps))
    assert by_class.totals["load"].requests == 4 * (2 * sum(steps) + 4)
    assert by_class.totals["load"].wavefronts == by_class.totals["load"].requests


@needs_nvdisasm
def test_a_quotient_on_global_data_in_a_shared_address_still_differs(tmp_path: Path) -> None:
    args = (_rows(tmp_path, [NORMAL, TINY, np.ones(N), MIXED]),)
    traced_ = traced(DATAPATHS, "dp_index", N, (4, 1, 1), args)
    cov = traced_.launch.coverage
    assert cov is not None and cov.mode == "whole" and cov.run == 4
    assert cov.differs is not None and "(pc 0x0210, STS) a shared address" in cov.differs


def test_the_instructions_that_compute_values_only_come_from_the_op_table() -> None:
    def only(text: str) -> bool:
        return values_only(parse_instruction(text, 0, None, None))

    assert only("FFMA R0, R1, R2, R3")
    assert only("FCHK P0, R0, R5")
    assert only("@!P0 IMAD.MOV.U32 R8, RZ, RZ, RZ")
    assert only("FMUL R0, R1, c[0x0][0x210]")  # a parameter
    assert not only("FMUL R0, R1, c[0x3][0x10]")  # a __constant__ (an unset one is named)
    assert not only("LDS R0, [R1]")
    assert not only("LDC R0, c[0x0][R1+0x10]")
    assert only("@P3 LDC R8, c[0x0][0x228]")  # a parameter, the same in every block
    assert only("ULDC.64 UR4, c[0x0][0x218]")
    assert not only("LDC R0, c[0x3][0x10]")
    for text in ("STS [R1], R0", "LDG.E R0, desc[UR4][R2.64]", "SHFL.BFLY PT, R0, R1, 0x1, 0x1f"):
        assert not only(text)
    for text in ("VOTE.ANY R0, PT, P0", "BAR.SYNC.DEFER_BLOCKING 0x0", "BRA `(.L_x_1)", "EXIT"):
        assert not only(text)
    assert not only("S2R R0, SR_TID.X")


def _division_branch(function: Function) -> tuple[ControlFlow, int]:
    """The control flow of ``function`` and the index of the branch around its division's
    slow path (the ``BRA`` before ``MOV Rx, <return>; CALL``)."""
    program = decode_function(function)
    kinds = [shared_op_of(ins) for ins in function.instructions]
    flow = ControlFlow(function, program.destinations, kinds, program.values)
    ins = function.instructions
    call = next(i for i, x in enumerate(ins) if x.opcode == "CALL")
    return flow, max(i for i in range(call) if ins[i].opcode == "BRA")


@needs_nvdisasm
def test_a_branch_around_a_slow_path_chooses_values_and_taints_what_the_callee_writes() -> None:
    info, disassembly = cubin(DATAPATHS)
    function = find_function(disassembly, find_kernel(info, "dp_norm"), info.path)
    flow, branch = _division_branch(function)
    region = flow.region(branch)
    assert region.values
    ins = function.instructions
    call = next(i for i in range(branch, len(ins)) if ins[i].opcode == "CALL")
    start = flow.target(ins[call])
    assert start is not None and start > region.reconverge  # the subroutine lies past it
    # a register the subroutine writes and the caller's paths do not is the region's too
    caller = {d for i in range(branch + 1, region.reconverge) for d in flow.destinations[i]}
    callee_only = {d for i in range(start, len(ins)) for d in flow.destinations[i]} - caller
    assert callee_only and callee_only <= region.dests
    returns = [i for i in range(start, len(ins)) if ins[i].opcode == "RET"]
    assert returns and set(returns) <= flow.returns.keys()


@needs_nvdisasm
def test_a_call_whose_return_address_is_not_its_own_is_not_followed() -> None:
    info, disassembly = cubin(DATAPATHS)
    function = find_function(disassembly, find_kernel(info, "dp_norm"), info.path)
    ins = list(function.instructions)
    call = next(i for i, x in enumerate(ins) if x.opcode == "CALL")
    mov = ins[call - 1]
    assert mov.opcode == "MOV" and isinstance(mov.operands[1], Imm)
    elsewhere = Imm(hex(ins[call + 2].pc), ins[call + 2].pc, float(ins[call + 2].pc))
    ins[call - 1] = replace(mov, operands=(mov.operands[0], elsewhere))
    flow, branch = _division_branch(replace(function, instructions=ins))
    assert not flow.region(branch).values  # the return would skip an instruction
    assert all(call not in sites for sites in flow.returns.values())  # (another call's are)


#: four divisions unrolled, whose slow path ptxas calls with an argument's move between the
#: return address's MOV and the CALL (tests/data/trace/divcalls, as llm.c's softmax kernel 7)
DIVCALLS = TRACE_DATA / "divcalls" / "divcalls.sm_90.cubin"


@needs_nvdisasm
def test_a_call_with_an_argument_moved_after_its_return_address_is_followed() -> None:
    info, disassembly = cubin(DIVCALLS)
    function = find_function(disassembly, find_kernel(info, "row_scale"), info.path)
    ins = function.instructions
    calls = [i for i, x in enumerate(ins) if x.opcode == "CALL"]
    assert len(calls) == 4
    moved = [c for c in calls if ins[c - 1].opcode != "MOV"]  # MOV R16, ...; IMAD.MOV; CALL
    assert moved and all(ins[c - 2].opcode == "MOV" for c in moved)
    program = decode_function(function)
    kinds = [shared_op_of(x) for x in ins]
    flow = ControlFlow(function, program.destinations, kinds, program.values)
    assert set(calls) <= set().union(*flow.returns.values())  # every call's return proven
    for c in calls:  # the branch around each slow path chooses values only
        branch = max(i for i in range(c) if ins[i].opcode == "BRA")
        assert flow.region(branch).values


@needs_nvdisasm
def test_rows_whose_divisions_take_other_paths_leave_the_blocks_alike(tmp_path: Path) -> None:
    # rows of 4 N values, so that each thread runs all four divisions: block 0's on the
    # fast path, block 1's on the slow one, block 2's on both
    rows = [np.tile(row, 4) for row in (NORMAL, TINY, MIXED, np.ones(N))]
    args = (_rows(tmp_path, rows), f"2={4 * N}")  # n
    by_class = traced(DIVCALLS, "row_scale", N, (4, 1, 1), args)
    ran = every_block(DIVCALLS, "row_scale", N, (4, 1, 1), args)
    cov = by_class.launch.coverage
    assert cov is not None and cov.mode == "alike" and cov.run == 1, cov
    assert by_class.totals == ran.totals
    # by hand, per block: thread 0 stores s[0] and s[1] (one STS.64), each of the 4 warps
    # reads both (one LDS.64, a broadcast)
    assert by_class.totals["store"].requests == 4 and by_class.totals["store"].wavefronts == 4
    assert by_class.totals["load"].requests == 16 and by_class.totals["load"].wavefronts == 16


#: hand-written SASS's first lines: R0 = the thread index, R3 = the block's word of its first
#: parameter (global data), R2 = the thread's shared word, P0 = (that word != 0)
DATA_WORD = """S2R R0, SR_TID.X
S2R R12, SR_CTAID.X
LDC.64 R4, c[0x0][0x210]
ULDC.64 UR8, c[0x0][0x208]
IMAD.WIDE R4, R12, 0x4, R4
LDG.E R3, desc[UR8][R4.64]
LEA R2, R0, 0x400, 0x2
ISETP.NE.AND P0, PT, R3, RZ, PT
"""


def words_launch(words: list[int]) -> Launch:
    """A grid of one warp a block, a block per word of ``words`` (its first parameter, the
    buffer ``a`` that :data:`DATA_WORD` reads), 4 KiB of shared memory."""
    mem = GlobalMemory()
    a = mem.add_buffer(np.array(words, dtype=np.int32).tobytes(), "a")
    return Launch(
        block=(32, 1, 1),
        grid=(len(words), 1, 1),
        params=struct.pack("<Q", a),
        param_base=0x210,
        static_smem=4096,
        memory=mem,
    )


# A hand-written caller and subroutine whose return goes where the block's word of a says:
# blocks 1-3 (a = 0) come back to the store at 0xb0, block 0 (a = 1) skips it. HEAD sets
# P0 = (a != 0) and R2 = the thread's word; the store is one request per block that runs it.
_HEAD = (
    DATA_WORD
    + """MOV R20, 0xa0
CALL.REL.NOINC `(.L_sub)"""
)
#: the subroutine's return reads R8, which only the path of a != 0 copies the return
#: address into; the other's R8 is 0xb0; where they meet R20 is copied into R9, not R8
_COPY_ELSEWHERE = """BRA `(.L_end)
STS [R2], R0
.L_end:
EXIT
.L_sub:
MOV R8, 0xb0
@!P0 BRA `(.L_join)
IMAD.MOV.U32 R8, RZ, RZ, R20
.L_join:
MOV R9, R20
RET.REL.NODEC R8 `(k)"""
#: the call comes back; then the caller picks R20 by a (a != 0: 0xe0, else the store's
#: 0xd0) and jumps to the subroutine's return without a call
_ENTERED = """MOV R21, 0xe0
SEL R20, R21, 0xd0, P0
BRA `(.L_ret)
STS [R2], R0
EXIT
.L_sub:
IADD3 R9, R0, 0x1, RZ
.L_ret:
RET.REL.NODEC R20 `(k)"""

#: the subroutine returns at once where a != 0 (its return proven: where it goes, not
#: whether it goes now), else stores first
_RETURNS_EARLY = """EXIT
.L_sub:
@P0 RET.REL.NODEC R20 `(k)
STS [R2], R0
RET.REL.NODEC R20 `(k)"""

#: a branch on a around a call of a subroutine that stores after a return guarded by the
#: thread index (never taken): the store is the subroutine's, in the branch's region too
_CALLED_BEHIND_DATA = (
    DATA_WORD
    + """ISETP.GT.AND P1, PT, R0, 0x1000, PT
@P0 BRA `(.L_skip)
MOV R20, 0xc0
CALL.REL.NOINC `(.L_sub)
.L_skip:
EXIT
.L_sub:
@P1 RET.REL.NODEC R20 `(k)
STS [R2], R0
RET.REL.NODEC R20 `(k)"""
)

#: the subroutine calls another, which picks the first's return address by a
_CALLEE_WRITES = """BRA `(.L_end)
STS [R2], R0
.L_end:
EXIT
.L_sub:
MOV R21, 0xf0
CALL.REL.NOINC `(.L_sub2)
RET.REL.NODEC R20 `(k)
.L_sub2:
MOV R22, 0xb0
SEL R20, R20, R22, P0
RET.REL.NODEC R21 `(k)"""


@pytest.mark.parametrize(
    "body",
    [
        *(
            _HEAD + "\n" + tail
            for tail in (_COPY_ELSEWHERE, _ENTERED, _RETURNS_EARLY, _CALLEE_WRITES)
        ),
        _CALLED_BEHIND_DATA,
    ],
)
def test_a_return_that_may_go_elsewhere_is_not_proven(body: str) -> None:
    """A return is proven to come back only where the register it reads holds the call's
    return address on every path (a copy of it into another register is not one, nor is
    the address a subroutine it calls may write) and no path reaches it but through the
    call; a guard on data of a return decides more than values, and what follows a guarded
    return is the subroutine's too: else blocks whose data differ return elsewhere, or
    sooner, or store where the class's block did not."""
    function = numbered(body)
    for every in (False, True):
        tr = execute.run(function, words_launch([1, 0, 0, 0]), grid=True, every_block=every)
        assert [(r.instruction.opcode, r.n) for r in tr.records] == [("STS", 3)]  # by hand
        assert tr.coverage is not None and tr.coverage.mode == "whole"


#: a compare-and-swap on the thread's (zeroed) shared word that compares with a, not with
#: what it loaded: it swaps where a == 0, and only the block whose a != 0 goes on to store
_CAS_ON_DATA = (
    DATA_WORD
    + """ATOMS.CAST.SPIN R6, [R2], R3, R0
ISETP.NE.AND P1, PT, R6, RZ, PT
@P1 BRA `(.L_skip)
STS [R2], R0
.L_skip:
EXIT"""
)


def test_a_swap_decided_by_its_compare_value_on_global_data_differs() -> None:
    """Whether a compare-and-swap swapped depends on its compare value as much as on the
    word: a compare value on global data taints the swap's result, so the blocks whose a
    differs are not proven alike from the first (which would count its store four times)."""
    function = numbered(_CAS_ON_DATA)
    for every in (False, True):
        tr = execute.run(function, words_launch([1, 0, 0, 0]), grid=True, every_block=every)
        assert [(r.instruction.opcode, r.n) for r in tr.records if r.n] == [
            ("ATOMS", 4),
            ("STS", 1),
        ]  # by hand: every block's warp swaps or not once; block 0 alone stores
        assert tr.coverage is not None and tr.coverage.mode == "whole"
