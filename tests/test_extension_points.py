"""Each extension point of CONTRIBUTING.md, used once: a new SASS opcode, a new lint
rule, a new architecture, a new report format and a new front end are each registered
the documented way (a decorator or a register function of the real registry, nothing
patched), here inside the test, and then seen at work through the code that serves users.

(An op and a check format are proved by the tests of their own registries:
tests/test_ops.py and tests/test_check_formats.py.)
"""

from __future__ import annotations

import dataclasses
import json
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

from shmem_cli.analysis.analyze import analyze_spec
from shmem_cli.analysis.cost import RequestBatch, cost_requests
from shmem_cli.checks.report import Severity
from shmem_cli.cli import main
from shmem_cli.cuda import sass, toolchain
from shmem_cli.cuda.sass import Instruction
from shmem_cli.hardware import arch
from shmem_cli.hardware.engine import AccessKind
from shmem_cli.lint import rules
from shmem_cli.lint.rules import AccessCheck, Hit
from shmem_cli.model import Cost
from shmem_cli.render import report_formats
from shmem_cli.render.options import RenderOptions
from shmem_cli.spec.compile import spec_from_mapping
from shmem_cli.spec.schema import spec_schema
from shmem_cli.trace.emulator import decode, execute, op_table
from shmem_cli.trace.emulator.operands import write_u32
from shmem_cli.trace.emulator.state import Block, Idx, Launch

from .conftest import ROOT, TRACE_DATA

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


def _single_request(item: AccessCheck) -> Iterator[Hit]:
    if item.result.cost.requests == 1:
        yield Hit(f"{item.result.site.name!r} makes a single request", (("requests", 1),))


def test_a_new_lint_rule_is_one_module_in_the_registry(tmp_path: Path) -> None:
    """A rule module (CODE, NAME, SEVERITY, SCOPE, check, docstring) registered with
    ``rules.register`` is run by ``shmem lint``, listed by ``shmem rules``, chosen by
    ``--select`` and described in SARIF: all read the one registry."""
    module = types.ModuleType("single_request", "An access makes exactly one request.")
    vars(module).update(
        CODE="SH999",
        NAME="single-request",
        SEVERITY=Severity.WARNING,
        SCOPE="access",
        check=_single_request,
    )
    spec = tmp_path / "row.yaml"
    spec.write_text(json.dumps(ROW_READ))  # JSON is YAML
    rules.register(module)
    try:
        listed = CliRunner().invoke(main, ["rules"])
        selected = CliRunner().invoke(
            main, ["lint", str(spec), "--select", "single-request", "--format", "json"]
        )
        sarif = CliRunner().invoke(main, ["lint", str(spec), "--format", "sarif"])
    finally:
        rules.RULES.unregister("SH999")
    assert "SH999  single-request" in listed.output
    found = json.loads(selected.output)["findings"]
    assert [(f["code"], f["message"]) for f in found] == [("SH999", "'row' makes a single request")]
    driver = json.loads(sarif.output)["runs"][0]
    assert "SH999" in [r["id"] for r in driver["tool"]["driver"]["rules"]]
    assert [r["ruleId"] for r in driver["results"]] == ["SH999"]
    assert "SH999" not in CliRunner().invoke(main, ["rules"]).output


def test_a_new_architecture_is_one_profile() -> None:
    """An ``ArchProfile`` registered with ``arch.register``: specs may name it and are costed
    with its numbers. Here a made-up GPU with 16 banks of 4 bytes: a warp reading 32
    consecutive floats puts two lanes in every bank, 2 wavefronts where the H200 needs 1."""
    narrow = dataclasses.replace(arch.SM90, name="sm_narrow", measured_on="no GPU", banks=16)
    arch.register(narrow)
    try:
        h200 = analyze_spec(spec_from_mapping(ROW_READ)).accesses[0].cost
        mine = analyze_spec(spec_from_mapping({**ROW_READ, "arch": "sm_narrow"})).accesses[0].cost
        named = "sm_narrow" in spec_schema()["properties"]["arch"]["enum"]
    finally:
        arch.unregister("sm_narrow")
    assert named
    assert (h200.wavefronts, h200.max_ways) == (1, 1)
    assert (mine.wavefronts, mine.max_ways) == (2, 2)


def _count(report: Any, options: RenderOptions, title: str) -> str:
    """A made-up report format: the number of requests of a report's JSON, whatever it is."""
    figures = json.dumps(report.to_json()).count('"requests"')
    return f"{title}: {figures} request figures\n"


def test_a_new_report_format_reaches_analyze_trace_and_sweep() -> None:
    """One ``register_format`` in the report-format registry, nothing else: analyze, trace
    and sweep all offer ``--format count`` and draw it."""
    spec = str(ROOT / "access_specs" / "column_read_32x32.yaml")
    cubin = str(TRACE_DATA / "column_read.sm_90.cubin")
    report_formats.register_format(report_formats.ReportFormat("count", _count))
    try:
        runs = [
            CliRunner().invoke(main, ["analyze", spec, "--format", "count"]),
            CliRunner().invoke(main, ["sweep", spec, "--pad", "0,1", "--format", "count"]),
        ]
        if toolchain.which("nvdisasm") is not None:
            runs.append(
                CliRunner().invoke(main, ["trace", cubin, "--block", "32,32", "--format", "count"])
            )
    finally:
        report_formats.unregister_format("count")
    for run in runs:
        assert run.exit_code == 0, run.output
        assert run.output.startswith("shmem ") and run.output.endswith(" request figures\n")
    gone = CliRunner().invoke(main, ["analyze", spec, "--format", "count"])
    assert gone.exit_code == 2


@dataclass(frozen=True)
class RowSite:
    """The site of the made-up front end below: column ``c`` of a tile."""

    column: int

    @property
    def name(self) -> str:
        return f"column {self.column}"

    @property
    def line(self) -> int | None:
        return None

    @property
    def loops(self) -> tuple[str, ...]:
        return ()

    def label(self, op: str) -> str:
        return f"{op} column {self.column}"


@dataclass(frozen=True)
class ColumnReads:
    """The made-up front end's report: one (site, cost) per column read."""

    reads: tuple[tuple[RowSite, Cost], ...]

    def to_json(self) -> dict[str, Any]:
        return {"reads": [{"column": s.column, **c.cost_json()} for s, c in self.reads]}


def _column_text(report: ColumnReads, options: RenderOptions) -> str:
    return "".join(f"{s.name}: {c.wavefronts} wavefronts\n" for s, c in report.reads)


def test_a_new_front_end_is_batches_a_site_and_a_view() -> None:
    """A front end hands the cost door request batches ((R, 32) byte addresses, active
    lanes, warp and iteration) and an ``AccessKind``, pairs each ``Cost`` with a site of its
    own, and registers a view of its report: then every report format draws it. Here a
    made-up front end for "each lane reads column c of a 32x32 float tile"."""
    lanes = np.arange(32)
    reads = []
    for c in (0, 1):
        addr = (4 * (32 * lanes + c))[None, :].astype(np.int64)
        one = np.zeros(1, np.int64)  # one request: warp 0, iteration 0
        batch = RequestBatch(addr, np.ones_like(addr, dtype=bool), one, one)
        kind = AccessKind(op="load", size=4)
        cost = cost_requests(
            [batch], kind, arch.SM90, warps=1, iterations=1, where=lambda warp, it: ()
        )
        reads.append((RowSite(c), cost))
    report = ColumnReads(tuple(reads))
    view = report_formats.ReportView(_column_text, lambda report, options: [])
    report_formats.register_view(ColumnReads, view)
    options = RenderOptions()
    text = report_formats.render_report(report, "text", options)
    doc = json.loads(report_formats.render_report(report, "json", options))
    # all 32 lanes of a column fall in one bank (row pitch 128 B): 32-way, 32 wavefronts
    assert text == "column 0: 32 wavefronts\ncolumn 1: 32 wavefronts\n"
    assert [(r["column"], r["wavefronts"], r["max_ways"]) for r in doc["reads"]] == [
        (0, 32, 32),
        (1, 32, 32),
    ]
