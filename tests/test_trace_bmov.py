"""Convergence barriers saved and restored with ``BMOV`` keep their lanes, and lanes a yield
takes to their ``BSYNC`` count its execution (docs/hardware-model.md, 9h).

``BMOV.32.CLEAR Rd, Bn`` writes the lanes barrier ``Bn`` waits for (bit ``i``: lane ``i``)
and empties it; ``BMOV.32 Bn, Ra`` makes it wait for the lanes of ``Ra`` again. nvcc -G
saves the caller's barrier so around a function that uses the same barrier register for a
divergent region of its own (tests/data/trace/bmov). The expected values are worked out
by hand from the programs.
"""

from __future__ import annotations

import numpy as np
import pytest

from shmem_cli.cuda import sass
from shmem_cli.trace.emulator import decode, execute
from shmem_cli.trace.emulator.state import Launch
from shmem_cli.trace.emulator.sync.convergence_state import Convergence

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm

LAB = TRACE_DATA / "bmov"


def _program(body: str) -> sass.Function:
    """A kernel of the lines of ``body`` (``.L_x_N:`` lines are labels)."""
    lines = ['\t.section\t.text._Z1kv,"ax",@progbits', "_Z1kv:"]
    pc = 0
    for text in body.strip().splitlines():
        if text.endswith(":"):
            lines.append(text)
        else:
            lines.append(f"        /*{pc:04x}*/                   {text} ;")
            pc += 0x10
    (fn,) = sass.parse("\n".join(lines))
    return fn


#: the odd lanes save B0 (a barrier of the whole warp) around a region of their own in B0,
#: through local memory, and store at the saved value's low byte (0xfc of 0xffffffff); the
#: even lanes' path is laid out after the BSYNC, so the odd lanes reach it first
_ROUND_TRIP = """
S2R R0, SR_LANEID
LDC R1, c[0x0][0x28]
IADD3 R1, R1, -0x10, RZ
IMAD.SHL.U32 R4, R0, 0x4, RZ
LOP3.LUT R2, R0, 0x1, RZ, 0xc0, !PT
ISETP.NE.AND P0, PT, R2, RZ, PT
LOP3.LUT R3, R0, 0x2, RZ, 0xc0, !PT
ISETP.NE.AND P1, PT, R3, RZ, PT
BSSY B0, `(.L_x_1)
@!P0 BRA `(.L_x_2)
BMOV.32.CLEAR R5, B0
STL [R1], R5
MOV R5, RZ
BSSY B0, `(.L_x_3)
@P1 BRA `(.L_x_4)
IADD3 R8, R8, 0x1, RZ
BRA `(.L_x_3)
.L_x_4:
IADD3 R8, R8, 0x2, RZ
.L_x_3:
BSYNC B0
LDL R6, [R1]
LOP3.LUT R7, R6, 0xfc, RZ, 0xc0, !PT
STS [R7], RZ
BMOV.32 B0, R6
.L_x_1:
BSYNC B0
STS [R4], R0
EXIT
.L_x_2:
IADD3 R8, R8, 0x3, RZ
BRA `(.L_x_1)
"""


def test_a_barrier_saved_through_local_memory_and_restored_waits_for_its_lanes() -> None:
    trace = execute.run(_program(_ROUND_TRIP), Launch(block=(32, 1, 1), static_smem=1024))
    inside, after = trace.records
    # the save read the barrier of the BSSY every lane ran: 0xffffffff, whose low byte
    # masked with 0xfc is 0xfc; the 16 odd lanes stored there
    assert inside.n == 1
    assert inside.active.tolist() == [[lane % 2 == 1 for lane in range(32)]]
    assert inside.addr[inside.active].tolist() == [0xFC] * 16
    # the restored barrier held the odd lanes at the BSYNC until the even ones came: the
    # store after the region is one request of the whole warp, each lane at 4 * lane
    assert after.n == 1
    assert after.active.all()
    assert after.addr.tolist() == [[4 * lane for lane in range(32)]]


#: lane 0 yields while lanes 1-31 have jumped to the BSYNC that waits for it
_PULLED = """
S2R R0, SR_LANEID
ISETP.NE.AND P0, PT, R0, RZ, PT
BSSY B0, `(.L_x_1)
@P0 BRA `(.L_x_1)
YIELD
.L_x_1:
BSYNC B0
EXIT
"""


def test_lanes_a_yield_takes_to_their_bsync_count_its_execution() -> None:
    trace = execute.run(_program(_PULLED), Launch(block=(32, 1, 1), static_smem=0))
    # S2R, ISETP, BSSY: 32 lanes each; @P0 BRA: the 31 lanes whose guard is on; YIELD:
    # lane 0; BSYNC: every lane once (31 of them taken there when lane 0 yielded); EXIT: 32
    assert trace.thread_instructions == 3 * 32 + 31 + 1 + 32 + 32


def _walk(x: int, n: int) -> int:
    """``walk`` of tests/data/trace/bmov/kernels/bmov.cu, in Python."""
    if n <= 0:
        return x
    return _walk(x * 3 + 1, n - 1) + 1 if x & 1 else _walk(x // 2, n - 1)


def _values(kernel: str) -> list[int]:
    """Each lane's ``v`` in the kernel's source, worked out in Python."""
    t = np.arange(64)
    if kernel == "recursive":
        return [_walk(i, i % 4) if i & 1 else i for i in range(64)]
    inner = np.where(t & 2, 3 * t + 1, 3 * (t + 7) + 1)  # branchy(t, t)
    if kernel == "one_side":
        return np.where(t & 1, inner, 5 * t).tolist()
    # both_sides: the even lanes run branchy(t + 100, t + 1)
    other = np.where((t + 1) & 2, 3 * (t + 100) + 1, 3 * (t + 107) + 1)
    return np.where(t & 1, inner, other).tolist()


#: the launches whose code saves a barrier with BMOV: -G's branchy, -O3's walk (its value
#: spilled to the stack with the caller's register at each level)
SAVES = {"one_side_g", "both_sides_g", "recursive_o3"}


@needs_nvdisasm
@pytest.mark.parametrize(
    "launch",
    [
        "one_side_g",
        "recursive_o3",
        *(
            pytest.param(x, marks=pytest.mark.slow)
            for x in ("both_sides_g", "recursive_g", "one_side_o3", "both_sides_o3")
        ),
    ],
)
def test_the_warp_is_whole_after_a_call_that_saved_its_barrier(launch: str) -> None:
    """Compiled kernels: the buffers, the whole warp after the region. Scheduling by
    instruction index kept these warps whole when the restored barrier waited for no lane
    too (the hand-written program above is the case it did not); they guard the -G calls
    and the recursion that save and restore the barrier."""
    kernel = launch.rsplit("_", 1)[0]
    with decode.recording() as seen:
        kt, out = lab.run(launch, LAB)
    assert ("BMOV" in seen) == (launch in SAVES)
    t = np.arange(64)
    assert lab.as_u32(out[0]).tolist() == (11 * (t ^ 1) + np.array(_values(kernel))).tolist()
    # after the if/else and the call the warps are whole: every lane's __activemask() is
    # the whole warp, and the shared store and load are one request a warp (2 warps)
    assert lab.as_u32(out[1]).tolist() == [0xFFFFFFFF] * 64
    ops = lab.per_op(kt)
    assert ops["store"] == (2, 2)
    assert ops["load"] == (2, 2)


def test_a_thread_leaves_only_the_barrier_of_the_bssy_it_holds() -> None:
    """``Convergence.leave``, the rule of docs/hardware-model.md 9h: lanes 0-3 hold one
    BSSY's barrier in B0 (waiting for lanes 0-3), lanes 4-7 another's (waiting for 0-7, as
    a caller's restored with BMOV does); a thread passing its BSYNC drops its bit from the
    lanes of its own BSSY only."""
    c = Convergence(threads=32, warp_size=32)
    c.start(0, np.arange(0, 4), np.full(4, 0x0F, dtype=np.uint32))
    c.start(0, np.arange(4, 8), np.full(4, 0xFF, dtype=np.uint32))
    c.leave(0, np.array([0, 1, 4]))  # threads of both BSSYs at once
    assert c.masks[0][:8].tolist() == [0x0C] * 4 + [0xEF] * 4
    assert not c.masks[0][8:].any()
    c.leave(0, np.array([2]))  # one BSSY's
    assert c.masks[0][:8].tolist() == [0x08] * 4 + [0xEF] * 4
