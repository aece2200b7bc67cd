"""The op vocabulary (shmem_cli/hardware/ops.py): what it says, and that everything reads it.

The table below is written by hand from the instruction set and the counter names
Nsight Compute gives on the H200 (tests/data/trace/measured.json was recorded with
them); the last test registers an op in the vocabulary, as CONTRIBUTING.md says, and
shows that the schema, the trace front end, the engine, verify's counters and the trace
report all take it up without another edit.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from shmem_cli.analysis.analyze import analyze
from shmem_cli.analysis.cost import rows_stats
from shmem_cli.cuda.sass import parse_instruction
from shmem_cli.hardware import arch, ops
from shmem_cli.hardware.engine import AccessKind
from shmem_cli.spec.schema import spec_schema
from shmem_cli.trace.aggregate import op_totals
from shmem_cli.trace.emulator.access_kind import shared_op_of
from shmem_cli.verify import ncu
from shmem_cli.verify import sass_check as verify_sass

LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld"
ST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st"

# name: (SASS opcodes, requests counter, wavefronts counter, matrix, atomic, in a spec)
VOCABULARY = {
    "load": (("LDS",), "smsp__sass_inst_executed_op_shared_ld", LD, False, False, True),
    "store": (("STS",), "smsp__sass_inst_executed_op_shared_st", ST, False, False, True),
    "atomic": (
        ("ATOMS",),
        "smsp__sass_inst_executed_op_shared_atom",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom",
        False,
        True,
        True,
    ),
    "ldmatrix": (("LDSM",), "smsp__sass_inst_executed_op_ldsm", LD, True, False, True),
    "stmatrix": (("STSM",), "smsp__sass_inst_executed_op_shared_stsm", ST, True, False, True),
    "cp_async": (("LDGSTS",), "smsp__sass_inst_executed_op_ldgsts", None, False, False, False),
    "wgmma": (
        (),
        "smsp__sass_inst_executed_op_shared_gmma",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma",
        False,
        False,
        False,
    ),
    # TMA and bulk copies: the instructions the hopper lab counted; no LSU wavefronts
    "tma": ((), "smsp__sass_inst_executed_op_tma", None, False, False, False),
}


def test_the_vocabulary_says_what_the_hardware_and_the_profiler_call_each_op() -> None:
    assert tuple(VOCABULARY) == tuple(ops.OP_NAMES)
    for op in ops.OPS:
        sass, requests, wavefronts, matrix, atomic, in_spec = VOCABULARY[op.name]
        assert (op.sass, op.counters.requests, op.counters.wavefronts) == (
            sass,
            requests,
            wavefronts,
        )
        assert (op.matrix, op.atomic, op.in_spec) == (matrix, atomic, in_spec)
    assert ops.get("cp_async").spec_op == "store"
    assert tuple(ops.MATRIX_OPS) == ("ldmatrix", "stmatrix")


def test_the_schema_enums_are_the_vocabulary() -> None:
    access = spec_schema()["definitions"]["access"]["properties"]
    assert access["op"]["enum"] == ["load", "store", "atomic", "ldmatrix", "stmatrix"]
    assert access["atomic"]["enum"] == ["inc", "add", "exch", "cas"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("LDS.U8 R4, [R2]", AccessKind("load", 1)),
        ("LDS.128 R4, [R2+0x10]", AccessKind("load", 16)),
        ("STS.64 [R2], R4", AccessKind("store", 8)),
        ("ATOMS.POPC.INC.32 RZ, [R2+URZ], RZ", AccessKind("atomic", 4, "inc")),
        # an add is served lane by lane through a uniform or a per-thread address register
        # (measured: tests/data/trace/semantics and its uniform/)
        ("ATOMS.ADD RZ, [UR4], R5", AccessKind("atomic", 4, "exch")),
        ("ATOMS.ADD RZ, [R2], R5", AccessKind("atomic", 4, "exch")),
        ("ATOMS.EXCH R0, [R2], R5", AccessKind("atomic", 4, "exch")),
        ("ATOMS.CAS R0, [R2], R4, R5", AccessKind("atomic", 4, "cas")),
        ("ATOMS.CAST.SPIN P0, [R2], R4, R5", AccessKind("atomic", 4, "cas_spin")),
        ("LDSM.16.M88.4 R4, [R2]", AccessKind("ldmatrix", 16, matrices=4)),
        ("STSM.16.MT88.2 [R2], R4", AccessKind("stmatrix", 16, matrices=2)),
        ("LDGSTS.E.BYPASS.128 [R2], desc[UR4][R6.64]", AccessKind("cp_async", 16)),
        ("LDG.E R4, desc[UR4][R2.64]", None),
    ],
)
def test_the_trace_and_verify_agree_on_which_sass_touches_shared_memory(
    text: str, kind: AccessKind | None
) -> None:
    ins = parse_instruction(text, 0x40, None, None)
    assert shared_op_of(ins) == kind
    listing = f"\t\tFunction : k\n        /*0040*/                   {text} ;\n"
    (found,) = verify_sass.parse_sass(listing)["k"]
    assert found.shared == (kind is not None)
    assert found.opcode == text.split()[0]


def test_verify_collects_every_counter_of_every_spec_op() -> None:
    for name in ops.SPEC_OPS:
        c = ops.get(name).counters
        for counter in (c.requests, c.wavefronts, c.all_requests, c.conflicts):
            assert counter is None or counter + ".sum" in ncu.metrics()


def test_an_op_registered_in_the_vocabulary_reaches_every_consumer() -> None:
    """One ``ops.register`` (and a profile with rules for it), nothing else: a made-up
    LDSP ("probe") that behaves as a plain load without pair merge is named by specs,
    recorded by the trace front end, costed by the engine, counted by verify and totalled
    by the trace report."""
    probe = ops.Op("probe", ("LDSP",), "reads", (4, 8, 16), ops.unit_counters("probe"))
    ops.register(probe)
    profile = dataclasses.replace(
        arch.SM90, name="sm_probe", measured_on="no GPU", ops=(*arch.SM90.ops, "probe")
    )
    arch.register(profile)
    spec = {
        "name": "probe",
        "arch": "sm_probe",
        "block": [32],
        "arrays": {"a": {"dtype": "float", "shape": [32, 32]}},
        "accesses": [{"name": "column", "array": "a", "op": "probe", "index": ["lane", 0]}],
    }
    try:
        named = "probe" in spec_schema()["definitions"]["access"]["properties"]["op"]["enum"]
        kind = shared_op_of(parse_instruction("LDSP.128 R4, [R2]", 0, None, None))
        lanes = np.arange(32, dtype=np.int64)[None, :]
        probe_kind = AccessKind("probe", 16)
        stats = rows_stats(16 * lanes, np.ones((1, 32), dtype=bool), probe_kind, profile)
        listing = "\t\tFunction : k\n        /*0000*/  LDSP.64 R4, [R2] ;\n"
        (found,) = verify_sass.parse_sass(listing)["k"]
        shared = found.shared
        counted = "smsp__sass_inst_executed_op_shared_probe.sum" in ncu.metrics()
        totalled = list(op_totals([]))
        analyzed = analyze(spec).accesses[0].cost.wavefronts
    finally:
        arch.unregister("sm_probe")
        ops.unregister("probe")
    assert named  # a spec may name it
    assert kind == AccessKind("probe", 16)  # the trace front end records it
    assert int(stats.wavefronts[0]) == 4  # the engine costs it: 16 bytes, 4 quarter-warp phases
    assert shared  # verify's SASS check counts it as shared memory
    assert counted  # verify collects its counters
    assert totalled[-1] == "probe"  # the trace report's per-op totals list it
    assert analyzed == 32  # a column of float[32][32]: every lane in bank 0
    # and gone again: the vocabulary is as it was
    assert tuple(ops.OP_NAMES) == tuple(VOCABULARY)
    assert "probe" not in spec_schema()["definitions"]["access"]["properties"]["op"]["enum"]
