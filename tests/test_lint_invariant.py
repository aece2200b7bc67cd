"""SH006 loop-invariant-access, and the invariance check under it.

The hand-written specs below are small enough to see by eye which loops the
addresses depend on; the measured H200 cases are checked against
``tests/hwtruth.loop_invariant``, which compares every iteration's (address,
active) rows directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from shmem_cli.analysis.invariance import invariant_loops
from shmem_cli.checks.report import Finding, Severity
from shmem_cli.lint.core import Target, lint_file
from shmem_cli.spec.compile import spec_from_mapping
from shmem_cli.spec.layout import resolve

from .conftest import ROOT
from .hwtruth import case_to_spec, is_cas_loop, loop_invariant, probe_cases, public_cases


def one_access(
    access: dict[str, Any],
    *,
    block: list[int] | None = None,
    shape: list[int] | None = None,
    dtype: str = "float",
) -> dict[str, Any]:
    return {
        "name": "t",
        "block": block or [32, 4],
        "arrays": {"a": {"dtype": dtype, "shape": shape or [64, 64]}},
        "accesses": [{"name": "acc", "array": "a", **access}],
    }


def loops_of(mapping: dict[str, Any], **kw: Any) -> list[str]:
    spec = spec_from_mapping(mapping)
    return [lp.var for lp in invariant_loops(spec, resolve(spec), spec.accesses[0], **kw)]


def lint(tmp_path: Path, mapping: dict[str, Any]) -> list[Finding]:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(mapping, sort_keys=False))
    return list(lint_file(Target(str(path), "s.yaml")).findings)


def sh006(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.code == "SH006"]


# --- invariant: fires -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("index", "loop"),
    [
        (["threadIdx.y", "threadIdx.x"], "0..7"),  # no loop variable at all
        (["i ^ i", "threadIdx.x"], "0..3"),
        (["(i & 8) + threadIdx.y", "threadIdx.x"], "0..4"),  # i < 8: i & 8 == 0
        (["i / 2", "threadIdx.x"], "0..1"),
        (["i % 1", "threadIdx.x + 32 * (i / 9)"], "0..8"),
    ],
)
def test_invariant_single_loop_is_reported(tmp_path: Path, index: list[str], loop: str) -> None:
    mapping = one_access({"index": index, "loop": {"i": loop}})
    assert loops_of(mapping) == ["i"]
    (f,) = sh006(lint(tmp_path, mapping))
    assert (f.rule, f.severity, f.access) == ("loop-invariant-access", Severity.WARNING, "acc")
    assert dict(f.facts)["invariant_loops"] == "i"
    assert "loop i" in f.message and "hoist" in f.message


def test_message_and_numbers(tmp_path: Path) -> None:
    # block 32x4 = 4 warps, float a[ty][tx]: each warp reads one 128-byte row, 1 wavefront
    # per request; 8 iterations -> 32 requests / 32 wavefronts, 4 of each if run once.
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: t\n"
        "block: [32, 4]\n"
        "arrays:\n"
        "  a: {dtype: float, shape: [64, 64]}\n"
        "accesses:\n"
        "  - name: acc\n"
        "    array: a\n"
        "    index: [threadIdx.y, threadIdx.x]\n"
        "    loop: {i: 0..7}\n"
    )
    (f,) = lint_file(Target(str(path), "s.yaml")).findings
    assert f.code == "SH006" and (f.path, f.line, f.column) == ("s.yaml", 6, 5)
    facts = dict(f.facts)
    assert facts["iterations"] == 8
    assert (facts["requests"], facts["wavefronts"]) == (32, 32)
    assert (facts["requests_if_hoisted"], facts["wavefronts_if_hoisted"]) == (4, 4)
    assert "(i = 0..7)" in f.message and "8x less often" in f.message
    assert "32 wavefronts; 4 wavefronts if hoisted" in f.message


def test_nested_invariant_in_inner_loop_only_names_it(tmp_path: Path) -> None:
    mapping = one_access({"index": ["j", "threadIdx.x"], "loop": {"j": "0..7", "k": "0..3"}})
    assert loops_of(mapping) == ["k"]
    (f,) = sh006(lint(tmp_path, mapping))
    assert dict(f.facts)["invariant_loops"] == "k"
    assert "loop k (k = 0..3)" in f.message and "4x less often" in f.message
    # 4 warps x 32 iterations, 1 wavefront each = 128; once per j: 4 x 8 = 32
    assert (dict(f.facts)["wavefronts"], dict(f.facts)["wavefronts_if_hoisted"]) == (128, 32)


def test_nested_invariant_in_outer_loop_only_names_it() -> None:
    mapping = one_access({"index": ["k", "threadIdx.x"], "loop": {"j": "0..2", "k": "0..3"}})
    assert loops_of(mapping) == ["j"]


def test_nested_invariant_in_both_loops(tmp_path: Path) -> None:
    mapping = one_access(
        {"index": ["threadIdx.y", "threadIdx.x"], "loop": {"j": "0..2", "k": [5, 9]}}
    )
    assert loops_of(mapping) == ["j", "k"]
    (f,) = sh006(lint(tmp_path, mapping))
    assert dict(f.facts)["invariant_loops"] == "j, k"
    assert "loops j, k (j = 0..2; k in [5, 9])" in f.message and "6x less often" in f.message


def test_loop_of_one_iteration_is_not_a_loop() -> None:
    mapping = one_access({"index": ["j", "threadIdx.x"], "loop": {"j": "0..7", "k": "3..3"}})
    assert loops_of(mapping) == []


# --- variant: does not fire -----------------------------------------------------------


@pytest.mark.parametrize(
    "access",
    [
        {"index": ["i", "threadIdx.x"], "loop": {"i": "0..7"}},
        # iterations 0 and 1 agree (i / 2 == 0), 2 differs
        {"index": ["i / 2", "threadIdx.x"], "loop": {"i": "0..3"}},
        # one lane of one warp moves by one word in the last iteration only
        {
            "index": ["threadIdx.y", "threadIdx.x + (i == 7 && tid == 77)"],
            "loop": {"i": "0..7"},
        },
        # the addresses never change; lane 5 of warp 0 sits out iteration 6 only
        {
            "index": ["threadIdx.y", "threadIdx.x"],
            "loop": {"i": "0..7"},
            "when": "i != 6 || tid != 5",
        },
    ],
    ids=["index", "late", "one-lane", "mask-only"],
)
def test_changing_access_is_not_reported(tmp_path: Path, access: dict[str, Any]) -> None:
    mapping = one_access(access)
    assert loops_of(mapping) == []
    assert sh006(lint(tmp_path, mapping)) == []


def test_inactive_lanes_addresses_do_not_count() -> None:
    # lanes 16..31 are off; their (unused) addresses change with i, the others' do not
    mapping = one_access(
        {
            "index": ["threadIdx.y", "lane < 16 ? lane : i"],
            "loop": {"i": "0..7"},
            "when": "lane < 16",
        }
    )
    assert loops_of(mapping) == ["i"]


def test_ldmatrix_ignores_lanes_that_give_no_row_address() -> None:
    # x1: lanes 0..7 give the rows; lanes 8..31 compute something that changes with i
    mapping = one_access(
        {
            "op": "ldmatrix",
            "matrices": 1,
            "index": ["lane < 8 ? lane : lane + i", "0"],
            "loop": {"i": "0..3"},
        },
        block=[32],
        shape=[64, 8],
        dtype="half",
    )
    assert loops_of(mapping) == ["i"]


def test_deep_differences_across_chunks() -> None:
    # 1024 threads: a chunk of the iteration space holds 64 iterations, so the loops below
    # span several chunks and the reference iteration lies in an earlier one.
    late = {
        "index": ["threadIdx.y", "threadIdx.x + (j == 2 && k == 50 && tid == 999)"],
        "loop": {"j": "0..2", "k": "0..99"},
    }
    assert loops_of(one_access(late, block=[32, 32])) == []
    only_k = {"index": ["k % 32", "threadIdx.x"], "loop": {"j": "0..2", "k": "0..99"}}
    assert loops_of(one_access(only_k, block=[32, 32])) == ["j"]
    last = {
        "index": ["threadIdx.y", "threadIdx.x + (i == 127 && tid == 1023)"],
        "loop": {"i": "0..127"},
    }
    assert loops_of(one_access(last, block=[32, 32])) == []


def test_large_access_is_checked_only_over_its_first_two_iterations() -> None:
    mapping = one_access({"index": ["threadIdx.y", "threadIdx.x"], "loop": {"i": "0..7"}})
    assert loops_of(mapping) == ["i"]
    assert loops_of(mapping, limit=128 * 8 - 1) == []  # 8 iterations x 128 threads
    assert loops_of(mapping, limit=128 * 8) == ["i"]


def test_atomic_and_idle_accesses_are_not_reported(tmp_path: Path) -> None:
    atomic = one_access(
        {"op": "atomic", "index": ["0", "lane"], "loop": {"i": "0..3"}}, dtype="int32"
    )
    assert loops_of(atomic) == ["i"]  # invariant, but every atomic's effect counts
    assert sh006(lint(tmp_path, atomic)) == []
    idle = one_access({"index": ["0", "lane"], "loop": {"i": "0..3"}, "when": "tid > 1000"})
    assert [f.code for f in lint(tmp_path, idle)] == ["SH005"]


# --- the measured cases ---------------------------------------------------------------

LOOPED = [c for c in (*probe_cases(), *public_cases()) if c.get("loop") and not is_cas_loop(c)]


def test_measured_looped_cases() -> None:
    probe3 = [c for c in LOOPED if c["name"].startswith("r3_")]
    assert len(probe3) == 81
    assert sum(map(loop_invariant, LOOPED)) == 29


@pytest.mark.parametrize("case", LOOPED, ids=lambda c: c["name"])
def test_rule_agrees_with_the_measured_cases(tmp_path: Path, case: dict[str, Any]) -> None:
    mapping = case_to_spec(case)
    expected = loop_invariant(case)
    assert bool(loops_of(mapping)) is expected
    fired = sh006(lint(tmp_path, mapping))
    # stores and atomics are never reported: only the value decides whether nvcc hoists them
    assert bool(fired) is (expected and case["op"] not in ("atomic", "store"))
    if fired:
        assert dict(fired[0].facts)["invariant_loops"] == case["loop"][0]


def test_the_measured_hoisted_loads_still_warn(tmp_path: Path) -> None:
    """The true positives: invariant loads the H200 ran once (fewer requests than counted)."""
    from shmem_cli.analysis.analyze import analyze_spec

    hoisted = kept = 0
    for case in LOOPED:
        if case["op"] != "load" or not loop_invariant(case):
            continue
        mapping = case_to_spec(case)
        counted = analyze_spec(spec_from_mapping(mapping)).accesses[0].requests
        ran_once = case["measured"]["requests"] < counted
        assert sh006(lint(tmp_path, mapping)), case["name"]
        hoisted += ran_once
        kept += not ran_once
    assert (hoisted, kept) == (17, 1)


def test_barrier_and_stores_keep_an_access_in_its_loop(tmp_path: Path) -> None:
    load = {"name": "acc", "array": "a", "index": ["threadIdx.y", "threadIdx.x"]}
    base = one_access({"index": ["threadIdx.y", "threadIdx.x"], "loop": {"i": "0..7"}})
    assert sh006(lint(tmp_path, base))
    barrier = dict(base, accesses=[dict(load, loop={"i": {"values": "0..7", "barrier": True}})])
    assert sh006(lint(tmp_path, barrier)) == []
    store = {"name": "st", "array": "a", "op": "store", "index": ["i", "threadIdx.x"]}
    stored = dict(base, accesses=[dict(load, loop={"i": "0..7"}), dict(store, loop={"i": "0..7"})])
    assert sh006(lint(tmp_path, stored)) == []
    # a barrier marked on one access marks the loop of that name in all of them
    other = dict(load, name="other", index=["threadIdx.y + 4", "threadIdx.x"], loop={"i": "0..7"})
    marked = dict(
        base, accesses=[dict(load, loop={"i": {"values": "0..7", "barrier": True}}), other]
    )
    assert sh006(lint(tmp_path, marked)) == []
    # an invariant store (the value is unknown to the spec) is not reported
    lone_store = one_access(
        {"op": "store", "index": ["threadIdx.y", "threadIdx.x"], "loop": {"i": "0..7"}}
    )
    assert sh006(lint(tmp_path, lone_store)) == []


def test_example_specs_have_no_loop_invariant_access() -> None:
    root = ROOT / "access_specs"
    for path in sorted(root.glob("*.yaml")):
        found = lint_file(Target(str(path), path.name)).findings
        assert not [f for f in found if f.code == "SH006"], path.name


# --- against a brute-force reference --------------------------------------------------


def brute_force(mapping: dict[str, Any]) -> list[str]:
    """Every iteration's (address, active) rows in one array, compared along each loop axis."""
    import numpy as np

    from shmem_cli.spec.space import Space

    spec = spec_from_mapping(mapping)
    space = Space(spec, resolve(spec), spec.accesses[0])
    rows = np.concatenate(
        [np.where(b.active, b.addr, -1).reshape(b.iterations, -1) for b in space.batches()]
    )
    loops = spec.accesses[0].loops
    grid = rows.reshape(*(lp.count for lp in loops), -1)
    return [
        lp.var
        for axis, lp in enumerate(loops)
        if lp.count > 1 and (grid == np.take(grid, [0], axis=axis)).all()
    ]


def random_spec(seed: int) -> dict[str, Any]:
    """Three loops, index terms that depend on some of them (some only seemingly), a mask."""
    import random

    rnd = random.Random(seed)
    rows = ["i", "j / 3", "i ^ j", "j & 4", "k % 2", "warp", "0", "i ^ i"]
    cols = ["k", "i & 2", "(k & 64) / 64", "lane", "j * (k / 99)", "0"]
    when = rnd.choice([None, "lane != (i % 4)", "k < 2 || tid != 40", "warp != j % 2"])
    access: dict[str, Any] = {
        "index": [f"({rnd.choice(rows)}) % 8", f"(threadIdx.x + {rnd.choice(cols)}) % 64"],
        "loop": {
            "i": f"0..{rnd.randint(1, 5)}",
            "j": f"0..{rnd.randint(0, 6)}",
            "k": f"0..{rnd.randint(1, 60)}",
        },
    }
    if when:
        access["when"] = when
    return one_access(access, block=[rnd.choice([32, 64, 256, 1024])])


@pytest.mark.parametrize("seed", range(40))
def test_random_nested_loops_match_brute_force(seed: int) -> None:
    mapping = random_spec(seed)
    assert loops_of(mapping) == brute_force(mapping)


def test_random_specs_cover_both_outcomes() -> None:
    found = [tuple(brute_force(random_spec(seed))) for seed in range(40)]
    for var in "ijk":  # each loop is invariant in some specs and not in others
        assert 10 <= sum(var in f for f in found) <= 30, var
