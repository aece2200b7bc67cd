"""From request records to the trace result: engine totals, lines, ops, JSON and text.

The records are made here by hand (as the emulator would make them); the expected
numbers are derived by hand from the bank rule: a warp reading a column of a 32x32
float tile puts its 32 lanes into one bank (32 wavefronts), a row is one wavefront.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from shmem_cli.cuda.sass import Instruction
from shmem_cli.hardware.arch import SM90
from shmem_cli.hardware.engine import AccessKind
from shmem_cli.hardware.ops import OP_NAMES
from shmem_cli.model import Totals
from shmem_cli.render.options import RenderOptions
from shmem_cli.render.trace.view import render_trace_text
from shmem_cli.trace.aggregate import line_totals, not_modelled, op_totals, trace_access
from shmem_cli.trace.requests import InstructionRecords
from shmem_cli.trace.result import (
    FileTrace,
    KernelTrace,
    LaunchInfo,
    TraceResult,
)
from shmem_cli.trace.side_totals import GenericAtomRow

BASE = 0x400  # sm_90's reserved kilobyte in front of the kernel's shared memory


def ins(pc: int, text: str, line: int | None = 6) -> Instruction:
    """An instruction as the SASS parser gives it (only what the report reads)."""
    head = text.split()[0].split(".")
    return Instruction(pc, None, head[0], tuple(head[1:]), (), "k.cu", line, text)


def records(
    instruction: Instruction,
    kind: AccessKind,
    addr: np.ndarray,
    active: np.ndarray | None = None,
    warp: np.ndarray | None = None,
    *,
    data_dependent: np.ndarray | None = None,
    src: np.ndarray | None = None,
    src_bytes: np.ndarray | None = None,
) -> InstructionRecords:
    """The emulator's records of one instruction, one request per row of ``addr``."""
    rows = len(addr)
    rec = InstructionRecords(0, instruction, kind)
    taint = np.zeros(rows, dtype=np.uint8)
    if data_dependent is not None:
        taint[data_dependent] = 1
    rec.add(
        addr.astype(np.int64),
        np.ones((rows, 32), dtype=bool) if active is None else active,
        np.arange(rows) if warp is None else warp,
        np.zeros(rows, dtype=np.int64),
        taint,
        src,
        src_bytes,
    )
    return rec


def tile_index(column: bool) -> np.ndarray:
    """Element index of each lane of 32 warps of a 32x32 block (warp = threadIdx.y)."""
    warp = np.arange(32)[:, None]
    lane = np.arange(32)[None, :]
    return lane * 32 + warp if column else warp * 32 + lane


def tile_records(column: bool, pc: int, line: int, op: str = "load") -> InstructionRecords:
    text = "LDS R6, [R6]" if op == "load" else "STS [R7], R0"
    return records(ins(pc, text, line), AccessKind(op, 4), BASE + 4 * tile_index(column))


def traced(recs: list[InstructionRecords]) -> KernelTrace:
    accesses = tuple(trace_access(r, SM90, warps=32, warps_per_block=32, blocks=1) for r in recs)
    return KernelTrace(
        name="column_read",
        mangled="_Z11column_readPfPKf",
        arch="sm_90",
        rules="sm_90",
        rules_note=None,
        launch=LaunchInfo(
            block=(32, 32, 1),
            grid=(1, 1, 1),
            blocks_traced=1,
            dynamic_smem=0,
            static_smem=4096,
            arguments=(("0 (out)", "zero-filled buffer"), ("1 (in)", "zero-filled buffer")),
            zero_filled=("0 (out)", "1 (in)"),
            defaulted=(),
        ),
        accesses=accesses,
        lines=line_totals(accesses),
        totals=op_totals(accesses),
        not_modelled=not_modelled(
            [(ins(0x200, "HGMMA.64x64x16.F32 R24, gdesc[UR4], R24", line=9), 4)]
        ),
    )


@pytest.fixture
def kernel() -> KernelTrace:
    return traced([tile_records(False, 0x130, 4, "store"), tile_records(True, 0x150, 6)])


def test_column_read_costs_32_wavefronts_per_request(kernel: KernelTrace) -> None:
    store, load = kernel.accesses
    assert (store.cost.requests, store.cost.wavefronts, store.cost.max_ways) == (32, 32, 1)
    assert (load.cost.requests, load.cost.wavefronts) == (32, 1024)
    assert (load.cost.ideal_wavefronts, load.cost.max_ways) == (32, 32)
    assert load.cost.conflicted_requests == 32
    assert load.cost.shown is not None and load.cost.shown.wavefronts == 32
    assert load.cost.detail is not None and len(load.cost.detail.wavefronts) == 32


def test_totals_per_op_and_line(kernel: KernelTrace) -> None:
    assert {op: (t.requests, t.wavefronts) for op, t in kernel.totals.items() if t.requests} == {
        "store": (32, 32),
        "load": (32, 1024),
    }
    assert [(t.line, t.ops, t.totals.wavefronts) for t in kernel.lines] == [
        (4, ("store",), 32),
        (6, ("load",), 1024),
    ]


def test_json_keys_are_the_documented_ones(kernel: KernelTrace) -> None:
    doc = json.loads(json.dumps(TraceResult((FileTrace("k.cu", (kernel,)),)).to_json()))
    assert doc["schema_version"] == 1
    k = doc["files"][0]["kernels"][0]
    assert doc["files"][0]["path"] == "k.cu"
    assert {"name", "mangled", "arch", "block", "grid", "accesses", "totals"} <= set(k)
    assert k["block"] == [32, 32, 1] and k["grid"] == [1, 1, 1]
    access = k["accesses"][1]
    assert {
        "file",
        "line",
        "sass",
        "op",
        "bytes_per_lane",
        "requests",
        "wavefronts",
        "ideal_wavefronts",
        "max_ways",
    } <= set(access)
    assert (access["file"], access["line"], access["sass"]) == ("k.cu", 6, "LDS R6, [R6]")
    assert (access["op"], access["bytes_per_lane"], access["max_ways"]) == ("load", 4, 32)
    assert access["worst_request"]["occurrence"] == 0
    # the ops, then the remote accesses and the op_misc instructions
    assert set(k["totals"]) == {*OP_NAMES, "dsmem", "misc"}
    assert k["totals"]["load"] == {"requests": 32, "wavefronts": 1024, "ideal_wavefronts": 32}
    assert k["totals"]["cp_async"] == {"requests": 0, "wavefronts": 0, "ideal_wavefronts": 0}
    assert (
        k["not_modelled"][0]["sass"].startswith("HGMMA") and k["not_modelled"][0]["executions"] == 4
    )
    assert k["zero_filled_buffers"] == ["0 (out)", "1 (in)"]
    assert k["generic_atoms"] == []  # no generic atomic that shared memory did not serve


def test_the_atomic_total_holds_the_generic_atomics_no_row_carries() -> None:
    # a generic atomic on global memory: op_atom wavefronts (and ideal), no request
    atom = GenericAtomRow(0x90, "ATOM.E.ADD.STRONG.GPU PT, RZ, desc[UR4][R2.64], R5", "k.cu", 7, 4)
    assert op_totals((), (atom,))["atomic"] == Totals(wavefronts=4, ideal_wavefronts=4, phases=4)
    assert op_totals(())["atomic"] == Totals()
    want = {"file": "k.cu", "line": 7, "pc": 0x90, "sass": atom.sass, "wavefronts": 4}
    assert atom.to_json() == want


def cp_async(src: np.ndarray | None) -> InstructionRecords:
    """One warp copying 4 bytes per lane into consecutive shared words."""
    lane = np.arange(32)[None, :]
    return records(
        ins(0x100, "LDGSTS.E [R3], desc[UR4][R4.64]", 3),
        AccessKind("cp_async", 4),
        BASE + 4 * lane,
        src=src,
        src_bytes=None if src is None else np.full((1, 32), 4),
    )


def test_cp_async_without_its_global_side_is_provisional() -> None:
    kernel = traced([cp_async(None)])
    assert kernel.provisional
    doc = kernel.to_json()
    assert doc["accesses"][0]["provisional"] is True
    assert doc["totals"]["cp_async"] == {"requests": 1, "wavefronts": 1, "ideal_wavefronts": 1}
    assert "provisional" in doc["provisional"][0]


def test_cp_async_with_its_global_side_uses_the_measured_rule() -> None:
    # the lanes read global words 128 bytes apart: one L1 bank, 32 distinct words, so the
    # global side costs 32 wavefronts although the shared side is conflict-free
    src = (0x10000 + 128 * np.arange(32))[None, :]
    kernel = traced([cp_async(src)])
    assert not kernel.provisional
    assert kernel.to_json()["accesses"][0]["provisional"] is False
    assert (kernel.totals["cp_async"].requests, kernel.totals["cp_async"].wavefronts) == (1, 32)


def test_data_dependent_requests_are_counted_and_flagged() -> None:
    index = tile_index(True)
    rec = records(
        ins(0x150, "LDS R6, [R6]"),
        AccessKind("load", 4),
        BASE + 4 * index,
        data_dependent=np.arange(32) % 2 == 0,
    )
    kernel = traced([rec])
    assert kernel.accesses[0].data_dependent_requests == 16
    assert kernel.to_json()["accesses"][0]["data_dependent"] is True
    text = render_trace_text(TraceResult((FileTrace("k.cu", (kernel,)),)), RenderOptions())
    assert "have addresses, lanes or counts decided by global-memory data;" in text
    # no buffer named by the records: every made-up buffer may be the one
    assert "0 (out), 1 (in) were zero-filled" in text


def test_the_note_names_only_the_buffers_read_into_a_decision() -> None:
    rec = records(
        ins(0x150, "@P0 STS [R6], R0"),
        AccessKind("store", 4),
        BASE + 4 * tile_index(False),
    )
    rec.decided = 1 | 8  # global data of the second buffer decided its lanes; no address did
    access = trace_access(
        rec, SM90, warps=32, warps_per_block=32, blocks=1, sources=lambda t: ("1 (in)",)
    )
    assert access.data_dependent_requests == 0
    assert access.data_decided and access.data_dependent
    assert access.data_from == ("1 (in)",)
    kernel = traced([rec])
    kernel = dataclasses.replace(kernel, accesses=(access,))
    row = kernel.to_json()["accesses"][0]
    assert (row["data_dependent"], row["data_from"]) == (True, ["1 (in)"])
    assert kernel.to_json()["data_from"] == ["1 (in)"]
    text = render_trace_text(TraceResult((FileTrace("k.cu", (kernel,)),)), RenderOptions())
    assert "decided by global-memory data read from 1 (in);" in text
    assert "parameter(s) 1 (in) were zero-filled" in text  # 0 (out) decides nothing


def test_ldmatrix_ignores_lanes_past_its_matrices() -> None:
    # ldmatrix.x1: only lanes 0-7 give row addresses; the others' addresses must not count
    addr = np.full((1, 32), BASE, dtype=np.int64)
    addr[0, :8] = BASE + 16 * np.arange(8)  # 8 rows of 16 bytes: conflict-free
    rec = records(ins(0x80, "LDSM.16.M88 R4, [R2]"), AccessKind("ldmatrix", 16), addr)
    access = trace_access(rec, SM90, warps=1, warps_per_block=1, blocks=1)
    assert (access.cost.requests, access.cost.wavefronts) == (1, 1)


def test_text_report(kernel: KernelTrace) -> None:
    text = render_trace_text(TraceResult((FileTrace("k.cu", (kernel,)),)), RenderOptions(heat=True))
    lines = text.splitlines()
    assert lines[0].startswith("k.cu  column_read  sm_90, block 32x32x1, grid 1x1x1")
    row = next(line for line in lines if "LDS R6, [R6]" in line)
    assert row.split()[:3] == ["32-way", "k.cu:6", "LDS"]
    assert "1,024" in row and "load (4 B)" in row
    assert "not modelled" in text and "HGMMA.64x64x16.F32" in text
    # the conflicting load gets its bank table; the clean store does not
    assert "warp 0, occurrence=0: 32 wavefront(s), ideal 1, worst bank 32-way" in text
    assert "STS [R7], R0  store pc 0x0130" not in text
    assert "LDS R6, [R6]  load pc 0x0150 (LDS)  line 6" in text


def test_accesses_by_source_line(kernel: KernelTrace) -> None:
    assert [a.op for a in kernel.accesses_at(6)] == ["load"]
    assert [a.op for a in kernel.accesses_at(6, "k.cu")] == ["load"]
    assert kernel.accesses_at(6, "other.cu") == ()
    assert kernel.accesses_at(5) == ()
