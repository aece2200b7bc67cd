"""Generic atomics beyond full-warp adds and ``op_atom`` (tests/data/trace/genatom2: the
project's own kernels, the pointer on shared or global memory at run time): partial warps
(lanes 0-15, odd lanes, one lane, a warp kept off), 64-bit lanes on one half-warp, 32- and
64-bit compare-and-swap, exchange, signed and unsigned min and max, and, or, xor, inc, a
``__half`` add (a compare-and-swap loop), lanes all on one word; 1 and 4 warps.

Skipped until the lab has run on a GPU (``measured.json``: lab/run.sh, then
tests/data/lab_common/misc_lab_parse.py). Then each launch's per-op wavefronts (op_atom, ld,
st, misc) are Nsight's, the atomics' rows its source counters' and what op_atom holds beyond
them the trace's generic atomics, as tests/test_trace_genatom.py checks them.
``lab/predicted.json`` holds what the trace said before the run (not checked here)."""

from __future__ import annotations

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm

if not (TRACE_DATA / "genatom2" / "measured.json").exists():
    pytest.skip("genatom2 not measured yet (its README)", allow_module_level=True)

from .misc_lab import MiscLab  # noqa: E402
from .misc_open import check_misc  # noqa: E402

LAB = MiscLab("genatom2")
#: launches whose op_misc the trace misses: (the trace's, Nsight's)
OPEN: dict[str, tuple[int, int]] = {}


def test_every_launch_was_counted_twice_alike() -> None:
    LAB.check_counted_twice_alike(54)


@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_the_misc_rule_on_every_launch(lid: str) -> None:
    # a warp's end 1, each of the two barriers' completions 1: no atomic here is declined
    # (no space query), a warp kept off the atomic or not
    check_misc(lid, LAB.warps(lid) + 2, int(LAB.counter(lid, "misc")), OPEN)


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_genatom2_lab_as_measured(lid: str) -> None:
    kt = LAB.check_traced(lid, OPEN, ("ld", "st", "atom"))
    # the atomics' rows are Nsight's source counters' (none for a generic atomic on global
    # memory), and what op_atom holds beyond them is the trace's generic atomics', no row's
    rows = {a.pc: a.cost.wavefronts for a in kt.accesses if a.op == "atomic" and a.cost.wavefronts}
    source = {
        i["pc"]: i["L1 Wavefronts Shared"]
        for i in LAB.measured[lid]["instructions"]
        if i["sass"].startswith("ATOM") and i["L1 Wavefronts Shared"]
    }
    assert rows == source
    beyond = int(LAB.counter(lid, "atom")) - sum(source.values())
    assert sum(r.wavefronts for r in kt.generic_atoms) == beyond
    assert {r.pc for r in kt.generic_atoms}.isdisjoint(rows)
