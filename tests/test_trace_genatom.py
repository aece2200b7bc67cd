"""Atomics through a generic pointer and ``op_misc`` (tests/data/trace/genatom: the project's own
kernels, the pointer on shared or global memory at run time, 1 and 4 warps, measured on an H100,
twice).

On global memory every generic add is done at once (P0 true). On shared memory a 32-bit integer and
a 64-bit integer add are done too; a float, half2, bf16x2 and double add are declined (P0 false),
the space queried (``QSPC``: 1 op_misc wavefront a warp) and the add done by a shared
compare-and-swap loop. The rule from the kernels' structure: a warp's end 1, each of the two
barriers' completions 1, the space query 1 a warp where the add falls back. The kernel without an
atomic runs its two barriers back to back (arithmetic between), which the GPU counts as one
(docs/hardware-model.md 9e: ``hardware.misc.STIRS``). Nsight's per-op op_atom counter also counts
each generic atomic on global memory (1 a warp, 64-bit 2) and a declined 32-bit one on shared memory
(1 a warp), which its source counters give no wavefront: the trace counts them beside its rows
(``KernelTrace.generic_atoms``), so its atomic total is Nsight's in every launch;
tests/data/trace/genclasses checks they are kept per block where blocks run side by side."""

from __future__ import annotations

import re

import pytest

from shmem_cli.render.options import RenderOptions
from shmem_cli.render.trace.view import render_trace_text
from shmem_cli.trace.result import FileTrace, TraceResult

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm
from .misc_lab import MiscLab
from .misc_open import check_misc
from .test_trace_classes import _same
from .test_trace_grid import classes_of

LAB = MiscLab("genatom")
FALLS_BACK = {"ga_f32", "ga_h2", "ga_bf2", "ga_f64"}  # declined on shared memory
OPEN: dict[str, tuple[int, int]] = {}  # the launches the rule misses: none
# the wavefronts the trace's row of the declined double add carries (a request of the declined
# class, 1 a half-warp: docs/hardware-model.md 9f) where Nsight's source counters read 0
DECLINED_ROW = {f"ga_f64_shared_w{w}": 2 * w for w in (1, 4)}


def rule(lid: str) -> int:
    launch = LAB.launches[lid]
    warps = launch["block"][0] // 32
    on_shared = launch["args"][2]["int"] == 0
    barriers = 1 if launch["kernel"] == "ga_none" else 2  # back to back: once
    return warps + barriers + warps * (on_shared and launch["kernel"] in FALLS_BACK)


def test_every_launch_was_counted_twice_alike() -> None:
    LAB.check_counted_twice_alike(28)


@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_the_rule_on_every_launch(lid: str) -> None:
    check_misc(lid, rule(lid), int(LAB.counter(lid, "misc")), OPEN)


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_genatom_lab_as_measured(lid: str) -> None:
    kt = LAB.check_traced(lid, OPEN, ("ld", "st", "atom"))  # op_atom exact in every launch
    # the atomics' rows are Nsight's source counters' (none for a generic atomic on global
    # memory or a declined 32-bit one), but the declined double add's
    rows = {a.pc: a.cost.wavefronts for a in kt.accesses if a.op == "atomic" and a.cost.wavefronts}
    source = {
        i["pc"]: i["L1 Wavefronts Shared"]
        for i in LAB.measured[lid]["instructions"]
        if i["sass"].startswith("ATOM") and i["L1 Wavefronts Shared"]
    }
    assert {pc: n for pc, n in rows.items() if pc in source} == source
    assert sum(n for pc, n in rows.items() if pc not in source) == DECLINED_ROW.get(lid, 0)
    # what Nsight's op_atom holds beyond its rows is the trace's generic atomics', no row's
    beyond = int(LAB.counter(lid, "atom")) - sum(source.values())
    assert sum(r.wavefronts for r in kt.generic_atoms) == beyond - DECLINED_ROW.get(lid, 0)
    assert {r.pc for r in kt.generic_atoms}.isdisjoint(rows)


@needs_nvdisasm
def test_the_reports_say_what_the_atomic_total_holds_beside_its_rows() -> None:
    # a generic add on global memory: no shared request, no row, 1 op_atom wavefront a warp
    kt, _ = lab.run("ga_u32_global_w4", LAB.folder)
    doc = kt.to_json()
    assert [a for a in doc["accesses"] if a["op"] == "atomic"] == []
    assert [(r["sass"].split()[0], r["wavefronts"]) for r in doc["generic_atoms"]] == [
        ("ATOM.E.ADD.STRONG.GPU", 4)
    ]
    assert doc["totals"]["atomic"] == {"requests": 0, "wavefronts": 4, "ideal_wavefronts": 4}
    report = TraceResult(files=(FileTrace(path="genatom.sm_90.cubin", kernels=(kt,)),))
    text = render_trace_text(report, RenderOptions(width=200))
    per_op = text[text.index("per op") :]
    assert re.search(r"^ *atomic +0 +4 +4 +0$", per_op, re.M), per_op
    assert "the atomic total holds 4 op_atom wavefront(s) that no row carries" in text
    # a declined half2 add on shared memory: its fall-back loop's rows, and 1 a warp beside
    kt, _ = lab.run("ga_h2_shared_w4", LAB.folder)
    rows = sum(a.cost.wavefronts for a in kt.accesses if a.op == "atomic")
    assert (rows, kt.totals["atomic"].wavefronts, kt.totals["atomic"].requests) == (8, 12, 4)


GENCLASSES = TRACE_DATA / "genclasses" / "genclasses.sm_90.cubin"


@needs_nvdisasm
@pytest.mark.parametrize(("kernel", "where"), [(k, w) for k in ("gc_u32", "gc_f32") for w in "01"])
def test_blocks_run_side_by_side_keep_their_generic_atomics_apart(kernel: str, where: str) -> None:
    # 12 blocks of 8 warps, block b adds 1 + b % 3 times: 24 executions a warp over the grid.
    # On global memory 1 op_atom wavefront each (no row); on shared memory an integer add is
    # its ATOMS form (1 each, a row), a float add declined (1 each, no row) beside its loop
    # (LDS and ATOMS.CAST.SPIN: 2 each). Traced by class (the first block alone, then the
    # others side by side, each block's tallies apart: 3 run) and with every block run.
    k = _same(kernel, (12, 1, 1), (f"2={where}",), cubin=GENCLASSES)
    cov = k.launch.coverage
    assert cov is not None
    if (kernel, where) == ("gc_f32", "1"):  # the add's P0 (global data) decides: all run
        assert cov.mode == "whole"
    else:
        assert (classes_of(cov), cov.run) == (3, 3)
    execs = 8 * 24
    unserved = 0 if (kernel, where) == ("gc_u32", "0") else execs
    rows = {"gc_u32": execs, "gc_f32": 2 * execs}[kernel] if where == "0" else 0
    assert sum(r.wavefronts for r in k.generic_atoms) == unserved
    assert k.totals["atomic"].wavefronts == rows + unserved
