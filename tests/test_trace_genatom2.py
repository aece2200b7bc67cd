"""Generic atomics beyond full-warp adds and ``op_atom`` (tests/data/trace/genatom2: the project's
own kernels, the pointer on shared or global memory at run time): partial warps (lanes 0-15, odd
lanes, one lane, a warp kept off), 64-bit lanes on one half-warp, 32- and 64-bit
compare-and-swap, exchange, signed and unsigned min and max, and, or, xor, inc, a ``__half`` add
(a compare-and-swap loop), lanes all on one word; 1 and 4 warps.

Measured on an H100 (``measured.json``, each launch counted twice, both runs alike): each launch's
per-op wavefronts (op_atom, ld, st, misc) are Nsight's, every shared row its source counters'
(wavefronts and ideal) and what op_atom holds beyond them the trace's generic atomics (on global
memory: operands per phase with a lane on, hardware/dsmem.py), as tests/test_trace_genatom.py checks
them, and op_misc. ``lab/predicted.json`` holds what the trace said before the run (not checked
here)."""

from __future__ import annotations

import pytest

from .conftest import TRACE_DATA, needs_nvdisasm

if not (TRACE_DATA / "genatom2" / "measured.json").exists():
    pytest.skip("genatom2 not measured yet (its README)", allow_module_level=True)

from .misc_lab import MiscLab  # noqa: E402
from .misc_open import check_misc  # noqa: E402

LAB = MiscLab("genatom2")
#: launches whose op_misc the trace misses: (the trace's, Nsight's), the same in both runs: none
OPEN: dict[str, tuple[int, int]] = {}


def test_every_launch_was_counted_twice_alike() -> None:
    LAB.check_counted_twice_alike(54)
    # every counter, not only op_misc, read the same in both runs
    assert all(not m["repeat_differs"] for m in LAB.measured.values())


@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_the_misc_rule_on_every_launch(lid: str) -> None:
    # a warp's end 1, each of the two barriers' completions 1: no atomic here is declined
    # (no space query), a warp kept off the atomic or not; but where every warp is kept off
    # (the only one, "off0" of 1 warp), the two barriers have only a taken branch between
    # them and the second costs nothing (hardware/misc.py STIRS), as in genatom's kernel
    # without an atomic
    warps = LAB.warps(lid)
    every_warp_off = "_off0_" in lid and warps == 1
    check_misc(lid, warps + 2 - every_warp_off, int(LAB.counter(lid, "misc")), OPEN)


@needs_nvdisasm
@pytest.mark.parametrize("lid", sorted(LAB.measured))
def test_genatom2_lab_as_measured(lid: str) -> None:
    kt = LAB.check_traced(lid, OPEN, ("ld", "st", "atom"))
    # every shared row (the zeroing STS, the copy-out LDS, the __half loop's generic LD, the
    # atomics) is Nsight's source counters', wavefronts and ideal (none for a generic atomic
    # on global memory), and what op_atom holds beyond them is the trace's generic atomics'
    shared = [a for a in kt.accesses if a.cost.wavefronts]
    measured = [i for i in LAB.measured[lid]["instructions"] if i["L1 Wavefronts Shared"]]
    got = {a.pc: (a.cost.wavefronts, a.cost.ideal_wavefronts) for a in shared}
    want = {i["pc"]: (i["L1 Wavefronts Shared"], i["L1 Wavefronts Shared Ideal"]) for i in measured}
    assert got == want
    rows = {a.pc: a.cost.wavefronts for a in shared if a.op == "atomic"}
    source = {i["pc"]: i["L1 Wavefronts Shared"] for i in measured if i["sass"].startswith("ATOM")}
    assert rows == source
    beyond = int(LAB.counter(lid, "atom")) - sum(source.values())
    assert sum(r.wavefronts for r in kt.generic_atoms) == beyond
    assert {r.pc for r in kt.generic_atoms}.isdisjoint(rows)
