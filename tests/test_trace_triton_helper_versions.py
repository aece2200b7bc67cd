"""A ``@triton.jit`` helper called from two lines, compiled by each Triton version PyTorch
releases pin (tests/data/triton/helper_calls/versions, build_versions.py): 3.0 to 3.6 write
no inlining chain into the PTX (no ``.loc ... inlined_at``), so the cubin's line table holds
the helper's lines alone; the calls are the TTGIR's callsite locations, and the k-th run of
the helper line's shared-memory instructions (kept apart by a barrier) is the k-th call's."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import shmem_cli
from shmem_cli.trace.triton.callsites import calls, read_callsites

from .conftest import TEST_DATA, needs_nvdisasm

DATA = TEST_DATA / "triton" / "helper_calls" / "versions"
VERSIONS = sorted(p.name for p in DATA.iterdir() if p.is_dir())


def _entry(version: str, name: str) -> Path:
    return next(p.parent for p in (DATA / version).glob(f"*/{name}.json"))


def test_every_version_pytorch_pins_is_kept() -> None:
    assert VERSIONS == ["3.0.0", "3.1.0", "3.2.0", "3.3.1", "3.4.0", "3.5.1", "3.6.0"]


def _params(names: tuple[str, ...]) -> list[pytest.ParameterSet]:
    """Each version; the oldest and newest in `make test`, those between slow."""
    fast = (VERSIONS[0], VERSIONS[-1])
    return [pytest.param(v, marks=() if v in fast else pytest.mark.slow) for v in names]


@needs_nvdisasm
@pytest.mark.parametrize("version", _params(tuple(VERSIONS)))
def test_a_helpers_tl_sum_is_placed_at_each_call(version: str) -> None:
    # two_sums calls column_sums (line 29: tl.sum of a 32 x 64 tile, 4 warps) at lines 36 and
    # 37. Each call's exchange, from every version's SASS: STS at (tid & 63) * 8 (+ 4 for the
    # second half of the block): lanes l and l + 16 share a bank, 2 wavefronts a warp; the
    # LDS and STS of the partial sums at tid * 4, 1 a warp; the LDS of the totals at
    # (tid & 63) * 8, 2 a warp; 4 warps each
    result = shmem_cli.trace(_entry(version, "two_sums"))
    helper = [a for a in result.accesses if a.line == 29]
    assert helper and all(a.site.caller is not None for a in helper)
    per_call: dict[int, list[tuple[str, int, int]]] = {}
    for a in sorted(helper, key=lambda a: a.pc):
        assert a.site.caller is not None
        per_call.setdefault(a.site.caller[1], []).append((a.op, a.cost.requests, a.cost.wavefronts))
    want = [("store", 4, 8), ("load", 4, 4), ("store", 4, 4), ("load", 4, 8)]
    assert per_call == {36: want, 37: want}
    lines = {(ln.line, ln.caller[1] if ln.caller else None) for ln in result.kernel.lines}
    assert {(29, 36), (29, 37)} <= lines and (29, None) not in lines


@needs_nvdisasm
@pytest.mark.parametrize("version", _params(tuple(VERSIONS)))
def test_a_helpers_tl_dot_operand_stores_are_placed_at_each_call(version: str) -> None:
    # two_stages calls tile_mm (its loads at lines 10 and 11, stored into shared memory for
    # the dot) at lines 21 and 22: 16 STS.U16 a load a call. Its wgmma instructions stay the
    # helper's line: ptxas places them on the load line or the dot's, not as many at each
    result = shmem_cli.trace(_entry(version, "two_stages"))
    stores = Counter(
        (a.line, a.site.caller[1] if a.site.caller else None)
        for a in result.accesses
        if a.line in (10, 11) and a.op == "store"
    )
    assert stores == {(10, 21): 16, (10, 22): 16, (11, 21): 16, (11, 22): 16}
    for a in result.accesses:
        if a.op == "wgmma":
            assert a.site.caller is None


def test_calls_split_only_runs_a_barrier_keeps_apart() -> None:
    user, lib = "/home/me/k.py", "/venv/triton/language/standard.py"
    text = f"""#loc1 = loc("{lib}":293:36)
#loc2 = loc("{user}":5:10)
#loc3 = loc("{user}":12:7)
#loc4 = loc("{user}":13:7)
#loc5 = loc(callsite(#loc1 at #loc2))
#loc6 = loc(callsite(#loc5 at #loc3))
#loc7 = loc(callsite(#loc5 at #loc4))
"""
    library, helpers = read_callsites(text, lambda f: "/triton/language/" in f)
    assert library == {(lib, 293): ((user, 5), (user, 5))}  # the helper's line, twice
    assert helpers == {(user, 5): ((user, 12), (user, 13))}
    lines = dict.fromkeys((0x10, 0x20, 0x40, 0x50), (user, 5))
    shared = {0x10: "STS", 0x20: "LDS", 0x40: "STS", 0x50: "LDS"}
    assert calls(lines, helpers, shared, {0x30}) == {
        0x10: (user, 12),
        0x20: (user, 12),
        0x40: (user, 13),
        0x50: (user, 13),
    }
    assert calls(lines, helpers, shared, {0x60}) == {}  # no barrier between: maybe interleaved
    assert calls(lines, helpers, {**shared, 0x50: "STS"}, {0x30}) == {}  # runs differ


def test_a_helper_called_from_one_line_names_no_call() -> None:
    user = "/home/me/k.py"
    text = f"""#loc2 = loc("{user}":5:10)
#loc3 = loc("{user}":12:7)
#loc4 = loc("{user}":12:30)
#loc6 = loc(callsite(#loc2 at #loc3))
#loc7 = loc(callsite(#loc2 at #loc4))
"""
    # two calls on one line (f(a) + f(b)): the line says it all, as the line table's chains
    assert read_callsites(text, lambda f: False)[1] == {}
