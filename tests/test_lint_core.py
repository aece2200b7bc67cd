"""The lint core and its rules: which accesses produce which findings, where, with which numbers.

The expected numbers come from the bank rules (32 banks of 4 bytes, bank =
word % 32), worked out by hand for each small spec below, not from shmem.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shmem_cli.checks.report import Finding, Severity
from shmem_cli.lint import core
from shmem_cli.lint.core import LintOptions, Target, effective_expect, lint_file, lint_files
from shmem_cli.lint.rules import RULES
from shmem_cli.lint.rules._base import lane_list
from shmem_cli.spec.compile import Expect

# 32x32 floats, block 32x32: warp w is threadIdx.y == w. The row access is
# conflict-free; the column access puts lane l on word 32*l -> bank 0 for all
# 32 lanes: 32-way, 32 wavefronts per request, 32 requests, ideal 32 in total.
COLUMN = """\
name: column
block: [32, 32]
arrays:
  tile: {dtype: float, shape: [32, 32]}
accesses:
  - name: row
    array: tile
    index: [threadIdx.y, threadIdx.x]
  - name: column
    array: tile
    index: [threadIdx.x, threadIdx.y]
EXPECT"""

# one warp, float a[64], a[2*tid]: lanes l and l+16 both land on bank 2l % 32 -> 2-way,
# 2 wavefronts for the one request whose ideal is 1.
STRIDE2 = """\
name: stride two
block: [32]
arrays:
  a: {dtype: float, shape: [64]}
accesses:
  - name: even words
    array: a
    index: [2 * tid]
EXPECT"""

# one warp of float4 loads, a[tid]: 512 contiguous bytes, 4 quarter-warp phases,
# conflict-free at the ideal of 4 wavefronts per request.
FLOAT4 = """\
name: vector
block: [32]
arrays:
  v: {dtype: float4, shape: [32]}
accesses:
  - name: float4 row
    array: v
    index: [tid]
EXPECT"""


def spec(tmp_path: Path, text: str, expect: str = "", name: str = "s.yaml") -> Target:
    p = tmp_path / name
    p.write_text(text.replace("EXPECT", expect))
    return Target(str(p), name)


def codes(findings: tuple[Finding, ...]) -> list[str]:
    return [f.code for f in findings]


# --- the registry ---------------------------------------------------------------------


def test_registry_codes_names_and_docs() -> None:
    assert [r.code for r in RULES] == [
        "SH001",
        "SH002",
        "SH003",
        "SH004",
        "SH005",
        "SH006",
        "SH007",
        "SH008",
        "SH009",
        "SH100",
    ]
    assert [r.name for r in RULES] == [
        "bank-conflict",
        "expectation-exceeded",
        "stale-expectation",
        "loose-expectation",
        "idle-access",
        "loop-invariant-access",
        "compiled-mismatch",
        "compiled-coverage",
        "likely-vectorized",
        "invalid-spec",
    ]
    for rule in RULES:
        assert rule.summary.endswith(".") and len(rule.details) > 80, rule.code
        assert (rule.check_access is None) != (rule.check_file is None)
    assert RULES.lookup("sh001") is RULES.lookup("bank-conflict") is RULES.rules[0]
    assert RULES.lookup("SH999") is None
    assert {r.code: r.severity for r in RULES}["SH004"] is Severity.INFO


def test_lane_list_wording() -> None:
    assert lane_list(range(32)) == "0,1,...,31"
    assert lane_list([0, 8, 16, 24]) == "0,8,16,24"
    assert lane_list(range(0, 32, 4)) == "0,4,...,28"
    assert lane_list([1, 2, 3, 5, 8, 13, 21]) == "1,2,3,5,8,13,... (7 lanes)"


# --- SH001 bank-conflict ----------------------------------------------------------------


def test_column_read_is_a_32_way_bank_conflict(tmp_path: Path) -> None:
    result = lint_file(spec(tmp_path, COLUMN))
    assert [a.name for a in result.accesses] == ["row", "column"]
    (f,) = result.findings
    assert (f.code, f.rule, f.severity) == ("SH001", "bank-conflict", Severity.ERROR)
    assert (f.path, f.line, f.column, f.access, f.spec) == ("s.yaml", 9, 5, "column", "column")
    assert "32-way bank conflict in 'column'" in f.message
    assert "1024 wavefronts where 32 would do" in f.message
    assert "32 of 32 requests" in f.message
    assert "worst request (warp 0): 32 wavefronts, ideal 1" in f.message
    assert "lanes 0,1,...,31 hit bank 0 (32 different words)" in f.message
    assert "expect: {max_ways: 32}" in f.message
    facts = dict(f.facts)
    assert facts["max_ways"] == 32 and facts["wavefronts"] == 1024
    assert facts["ideal_wavefronts"] == 32 and facts["requests"] == 32
    assert facts["worst_bank"] == 0 and facts["worst_lanes"] == ",".join(map(str, range(32)))


def test_conflict_free_true_keeps_the_default(tmp_path: Path) -> None:
    found = lint_file(spec(tmp_path, STRIDE2, "    expect: {conflict_free: true}\n")).findings
    assert codes(found) == ["SH001"]
    assert (
        "2-way" in found[0].message
        and "lanes 0,16 hit bank 0 (2 different words)" in found[0].message
    )


def test_even_with_a_bound_conflict_free_true_rejects_conflicts(tmp_path: Path) -> None:
    text = "    expect: {conflict_free: true, max_ways: 2}\n"
    assert codes(lint_file(spec(tmp_path, STRIDE2, text)).findings) == ["SH001"]


@pytest.mark.parametrize(
    "expect",
    [
        "    expect: {max_ways: 2}\n",
        "    expect: {conflict_free: false}\n",
        "    expect: {max_wavefronts_per_request: 2}\n",
    ],
)
def test_accepted_conflicts_are_not_findings(tmp_path: Path, expect: str) -> None:
    assert lint_file(spec(tmp_path, STRIDE2, expect)).findings == ()


def test_wide_accesses_at_their_ideal_are_conflict_free(tmp_path: Path) -> None:
    # 4 wavefronts per request, but that is the ideal of a 16-byte access
    result = lint_file(spec(tmp_path, FLOAT4))
    assert result.findings == ()
    t = result.accesses[0].totals
    assert (t.wavefronts, t.ideal_wavefronts) == (4, 4)


# --- SH002 expectation-exceeded -----------------------------------------------------------


def test_max_ways_exceeded(tmp_path: Path) -> None:
    (f,) = lint_file(spec(tmp_path, COLUMN, "    expect: {max_ways: 4}\n")).findings
    assert (f.code, f.rule, f.line, f.column) == ("SH002", "expectation-exceeded", 9, 5)
    assert "max_ways is 4 but the access is 32-way" in f.message
    assert "lanes 0,1,...,31 hit bank 0" in f.message


def test_max_wavefronts_per_request_counts_the_ideal(tmp_path: Path) -> None:
    (f,) = lint_file(
        spec(tmp_path, FLOAT4, "    expect: {max_wavefronts_per_request: 3}\n")
    ).findings
    assert f.code == "SH002"
    assert "max_wavefronts_per_request is 3 but the worst request takes 4" in f.message
    assert (
        lint_file(spec(tmp_path, FLOAT4, "    expect: {max_wavefronts_per_request: 4}\n")).findings
        == ()
    )


def test_both_bounds_in_one_finding(tmp_path: Path) -> None:
    text = "    expect: {max_ways: 1, max_wavefronts_per_request: 1}\n"
    (f,) = lint_file(spec(tmp_path, STRIDE2, text)).findings
    assert "max_ways is 1 but the access is 2-way" in f.message
    assert "max_wavefronts_per_request is 1 but the worst request takes 2" in f.message


def test_spec_level_expect_applies_to_every_access(tmp_path: Path) -> None:
    text = COLUMN.replace("accesses:", "expect: {max_ways: 32}\naccesses:")
    assert lint_file(spec(tmp_path, text)).findings == ()
    tight = COLUMN.replace("accesses:", "expect: {max_ways: 8}\naccesses:")
    assert codes(lint_file(spec(tmp_path, tight)).findings) == ["SH002"]


def test_access_expect_overrides_spec_expect_key_by_key(tmp_path: Path) -> None:
    text = COLUMN.replace("accesses:", "expect: {max_ways: 8}\naccesses:")
    own = "    expect: {max_ways: 32}\n"
    assert lint_file(spec(tmp_path, text, own)).findings == ()


def test_configured_default_sits_under_the_spec(tmp_path: Path) -> None:
    target = spec(tmp_path, COLUMN)
    loose = LintOptions(default_expect=Expect(max_ways=32))
    assert lint_file(target, loose).findings == ()
    tight = LintOptions(default_expect=Expect(max_ways=2))
    assert codes(lint_file(target, tight).findings) == ["SH002"]
    # the spec's own word wins over the configured default
    target = spec(tmp_path, COLUMN, "    expect: {max_ways: 32}\n")
    assert lint_file(target, tight).findings == ()


def test_effective_expect_layers() -> None:
    own = Expect(max_ways=4)
    spec_level = Expect(conflict_free=False, max_wavefronts_per_request=8)
    default = Expect(max_ways=2, conflict_free=True)
    merged = effective_expect(own, spec_level, default)
    assert merged == Expect(max_ways=4, max_wavefronts_per_request=8, conflict_free=False)
    assert effective_expect(None, None, None) is None


# --- SH003 / SH004 / SH005 ------------------------------------------------------------------


def test_stale_expectation_on_a_clean_access(tmp_path: Path) -> None:
    target = spec(tmp_path, FLOAT4, "    expect: {conflict_free: false}\n")
    (f,) = lint_file(target).findings
    assert (f.code, f.severity) == ("SH003", Severity.WARNING)
    assert f.line == 9 and f.column == 13  # at the expect: value, not at the access
    # one request, 4 quarter-warp phases, 4 wavefronts: the phases, not a conflict
    assert (
        "accepts bank conflicts but has none: its 1 request cost 4 wavefronts, none more "
        "than its phases with an active lane (4 in all)" in f.message
    )


# one warp of double loads a[tid], only lanes 0, 1, 2 and 16 active (0 and 1, 0 and 2 differ:
# no pair merge): two half-warp phases, 1 wavefront each -> 2 wavefronts over 2 phases, no
# bank conflict; the lanes' 32 bytes fit in one wavefront, so Nsight's ideal is 1
# (docs/hardware-model.md section 8)
HALVES = """\
name: halves
block: [32]
arrays:
  d: {dtype: double, shape: [32]}
accesses:
  - name: two lanes
    array: d
    index: [tid]
    when: tid < 3 || tid == 16
EXPECT"""


def test_stale_expectation_names_the_phases_not_the_ideal(tmp_path: Path) -> None:
    (f,) = lint_file(spec(tmp_path, HALVES, "    expect: {conflict_free: false}\n")).findings
    assert f.code == "SH003"
    # 2 wavefronts are its 2 phases; the ideal (1) is not what the check compares
    assert "its 1 request cost 2 wavefronts" in f.message
    assert "phases with an active lane (2 in all)" in f.message
    assert "ideal" not in f.message


@pytest.mark.parametrize(
    ("expect", "stale"),
    [
        ("{max_wavefronts_per_request: 8}", True),  # allows 8, the access takes its ideal 4
        ("{max_wavefronts_per_request: 4}", False),  # exactly the ideal: a tight bound
        ("{max_ways: 2}", True),
        ("{max_ways: 1}", False),
        ("{conflict_free: true}", False),
    ],
)
def test_stale_only_when_the_entry_allows_more(tmp_path: Path, expect: str, stale: bool) -> None:
    found = lint_file(spec(tmp_path, FLOAT4, f"    expect: {expect}\n")).findings
    assert codes(found) == (["SH003"] if stale else [])


def test_spec_wide_acceptance_is_not_stale(tmp_path: Path) -> None:
    text = COLUMN.replace("accesses:", "expect: {max_ways: 32}\naccesses:")
    assert lint_file(spec(tmp_path, text)).findings == ()  # 'row' is clean, and that is fine


def test_loose_bound_is_information(tmp_path: Path) -> None:
    (f,) = lint_file(spec(tmp_path, STRIDE2, "    expect: {max_ways: 8}\n")).findings
    assert (f.code, f.rule, f.severity) == ("SH004", "loose-expectation", Severity.INFO)
    assert "max_ways 8 could be 2" in f.message


def test_idle_access(tmp_path: Path) -> None:
    (f,) = lint_file(spec(tmp_path, STRIDE2, "    when: tid > 99\n")).findings
    assert (f.code, f.severity, f.access) == ("SH005", Severity.WARNING, "even words")
    assert "makes no requests" in f.message


# --- SH100 invalid-spec -------------------------------------------------------------------------


def test_invalid_spec_is_a_located_finding(tmp_path: Path) -> None:
    bad = COLUMN.replace(
        "    array: tile\n    index: [threadIdx.x", "    array: tyle\n    index: [threadIdx.x"
    )
    (f,) = lint_file(spec(tmp_path, bad)).findings
    assert (f.code, f.rule, f.severity) == ("SH100", "invalid-spec", Severity.ERROR)
    assert (f.line, f.column) == (10, 12)  # the value 'tyle'
    assert "tyle" in f.message and f.access is None


def test_yaml_syntax_error_has_a_line(tmp_path: Path) -> None:
    target = spec(tmp_path, "name: x\nblock: [32\narrays: {}\n")
    (f,) = lint_file(target).findings
    assert f.code == "SH100" and f.line is not None and f.line >= 2


def test_missing_file_is_an_invalid_spec_finding(tmp_path: Path) -> None:
    (f,) = lint_file(Target(str(tmp_path / "gone.yaml"), "gone.yaml")).findings
    assert f.code == "SH100" and f.path == "gone.yaml"


# --- findings ----------------------------------------------------------------------------------


def test_fingerprint_ignores_the_line_but_not_the_access(tmp_path: Path) -> None:
    first = lint_file(spec(tmp_path, COLUMN, name="a.yaml")).findings[0]
    moved = "# a comment that moves every line down\n" + COLUMN
    second = lint_file(spec(tmp_path, moved, name="a.yaml")).findings[0]
    assert second.line == first.line + 1
    assert second.fingerprint == first.fingerprint
    renamed = COLUMN.replace("name: column\n    array", "name: column2\n    array")
    third = lint_file(spec(tmp_path, renamed, name="a.yaml")).findings[0]
    assert third.access == "column2" and third.fingerprint != first.fingerprint


def test_severity_parse() -> None:
    assert Severity.parse("Warning") is Severity.WARNING
    assert Severity.ERROR > Severity.WARNING > Severity.INFO
    with pytest.raises(ValueError, match="error, warning, info"):
        Severity.parse("fatal")


# --- running many files ---------------------------------------------------------------------------


def test_parallel_run_equals_serial_run_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(core, "PARALLEL_MIN_FILES", 4)
    monkeypatch.setattr(core, "CHUNK_FILES", 2)
    texts = [
        COLUMN.replace("EXPECT", ""),
        STRIDE2.replace("EXPECT", ""),
        FLOAT4.replace("EXPECT", ""),
        "name: broken\n",
    ]
    targets = []
    for i in range(9):
        p = tmp_path / f"f{i}.yaml"
        p.write_text(texts[i % 4])
        targets.append(Target(str(p), p.name))
    serial = lint_files(targets, jobs=1)
    parallel = lint_files(targets, jobs=2)
    assert parallel == serial
    assert [f.path for f in parallel] == [f"f{i}.yaml" for i in range(9)]
    # "name: broken" lacks block, arrays and accesses: one SH100 finding each
    assert [codes(f.findings) for f in parallel[:4]] == [["SH001"], ["SH001"], [], ["SH100"] * 3]
