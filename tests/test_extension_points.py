"""Each extension point of CONTRIBUTING.md, used once: a new SASS opcode, a new lint
rule, a new architecture and a new front end are each registered the documented way,
here inside the test, and then seen at work through the code that serves users.

(An op and an output format are proved by the tests of their own registries.)
"""

from __future__ import annotations

import dataclasses
import json
import types
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.analysis.analyze import analyze_spec
from shmem_cli.analysis.totals import stats_totals
from shmem_cli.checks.report import Severity
from shmem_cli.cuda import sass
from shmem_cli.cuda.sass import Instruction
from shmem_cli.hardware import arch
from shmem_cli.hardware.engine import AccessKind, request_stats
from shmem_cli.lint import core, rules
from shmem_cli.lint.rules import AccessCheck, Hit
from shmem_cli.spec.compile import spec_from_mapping
from shmem_cli.spec.schema import spec_schema
from shmem_cli.trace.emulator import decode, execute, op_table
from shmem_cli.trace.emulator.operands import write_u32
from shmem_cli.trace.emulator.state import Block, Idx, Launch

ROW_READ = {
    "block": [32],
    "arrays": {"a": {"dtype": "float", "shape": [32, 32]}},
    "accesses": [{"name": "row", "array": "a", "index": [0, "lane"]}],
}


def _program(body: str) -> sass.Function:
    lines = ['.section\t.text._Z1kv,"ax",@progbits', '\t//## File "k.cu", line 7']
    lines += [
        f"        /*{16 * i:04x}*/  {text} ;" for i, text in enumerate(body.strip().splitlines())
    ]
    (fn,) = sass.parse("\n".join(lines))
    return fn


def test_a_new_opcode_is_one_decorated_builder() -> None:
    """``@op("NAME")`` in a family module is all the emulator needs to run an opcode."""
    assert "SEVEN" not in decode.registered()
    try:
        _run_seven()
    finally:
        del op_table.TABLE["SEVEN"]
    assert "SEVEN" not in decode.registered()


def _run_seven() -> None:
    ran: list[int] = []

    @op_table.op("SEVEN")
    def seven(ins: Instruction, ctx: op_table.Context) -> op_table.Step:
        """SEVEN Rd: Rd = 7 (a made-up opcode)."""
        (dst,) = ins.operands
        w = write_u32(dst, ins)

        def step(b: Block, ix: Idx) -> None:
            n = b.count(ix)
            ran.append(n)
            w(b, ix, np.full(n, 7, dtype=np.uint32), np.zeros(n, dtype=np.uint8))

        return step

    assert decode.registered()["SEVEN"] is seven
    # each thread stores at byte 4 * (tid * R1): the value the new opcode wrote decides
    fn = _program(
        """SEVEN R1
S2R R0, SR_TID.X
IMAD R2, R0, R1, RZ
STS [R2.X4], R1
EXIT"""
    )
    trace = execute.run(fn, Launch(block=(32, 1, 1), static_smem=4096))
    assert ran == [32]  # one warp of 32 threads reached it once
    (rec,) = trace.records
    # the store's addresses are 4 * 7 * tid: the value 7 came from the new opcode
    assert sorted(int(a) for a in rec.addr[0]) == [28 * t for t in range(32)]


def test_a_new_lint_rule_is_one_module_in_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule module (CODE, NAME, SEVERITY, SCOPE, check, docstring) listed in the
    registry is run by ``shmem lint`` on every access."""

    def check(item: AccessCheck) -> Iterator[Hit]:
        if item.result.requests == 1:
            yield Hit(f"{item.result.name!r} makes a single request", (("requests", 1),))

    module = types.ModuleType("single_request", "An access makes exactly one request.")
    vars(module).update(
        CODE="SH999", NAME="single-request", SEVERITY=Severity.INFO, SCOPE="access", check=check
    )
    rules.register(module)
    try:
        spec = tmp_path / "row.yaml"
        spec.write_text(json.dumps(ROW_READ))  # JSON is YAML
        linted = core.lint_file(core.Target(str(spec), "row.yaml"))
    finally:
        rules.RULES.unregister("SH999")
    mine = [f for f in linted.findings if f.code == "SH999"]
    assert [(f.rule, f.message) for f in mine] == [
        ("single-request", "'row' makes a single request")
    ]


def test_a_new_architecture_is_one_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    """An ``ArchProfile`` in the registry: specs may name it and are costed with its numbers.
    Here a made-up GPU with 16 banks of 4 bytes: a warp reading 32 consecutive floats
    puts two lanes in every bank, 2 wavefronts where the H200 needs 1."""
    narrow = dataclasses.replace(arch.SM90, name="sm_narrow", measured_on="no GPU", banks=16)
    monkeypatch.setitem(arch.PROFILES, narrow.name, narrow)
    spec_schema.cache_clear()
    try:
        h200 = analyze_spec(spec_from_mapping(ROW_READ)).accesses[0]
        mine = analyze_spec(spec_from_mapping({**ROW_READ, "arch": "sm_narrow"})).accesses[0]
        assert "sm_narrow" in spec_schema()["properties"]["arch"]["enum"]
    finally:
        monkeypatch.undo()
        spec_schema.cache_clear()
    assert (h200.wavefronts, h200.max_ways) == (1, 1)
    assert (mine.wavefronts, mine.max_ways) == (2, 2)


def test_a_new_front_end_is_addresses_and_a_kind() -> None:
    """A front end hands the engine (R, 32) byte addresses, the active lanes and an
    ``AccessKind``, and sums the answer with ``stats_totals``: here a made-up front end
    for "each lane reads column c of a 32x32 float tile", every column of it."""
    lanes = np.arange(32)
    addr = np.stack([4 * (32 * lanes + c) for c in range(32)]).astype(np.int64)  # (32, 32)
    active = np.ones_like(addr, dtype=bool)
    stats = request_stats(addr, active, AccessKind(op="load", size=4), arch.SM90)
    totals = stats_totals(stats)
    # all 32 lanes of a column fall in one bank (row pitch 128 B): 32-way, every column
    assert (totals.requests, totals.wavefronts, totals.ideal_wavefronts) == (32, 1024, 32)
    assert totals.max_ways == 32 and totals.conflicted_requests == 32
