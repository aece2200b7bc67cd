"""`shmem lint` on the command line: exit statuses, paths, configuration and baselines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TRACE_DATA

CLEAN = """\
name: clean
block: [32]
arrays:
  a: {dtype: float, shape: [32]}
accesses:
  - name: contiguous
    array: a
    index: [tid]
"""

# a[2*tid] over one warp: lanes l and l+16 share bank 2l % 32, a 2-way conflict
CONFLICT = """\
name: conflicted
block: [32]
arrays:
  a: {dtype: float, shape: [64]}
accesses:
  - name: even words
    array: a
    index: [2 * tid]
"""

BROKEN = (
    "name: broken\nblock: [32]\narrays:\n  a: {dtype: float, shape: [32]}\n"
    "accesses:\n  - array: b\n    index: [tid]\n"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with specs/{clean,conflict}.yaml; the current directory for the test."""
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "clean.yaml").write_text(CLEAN)
    (tmp_path / "specs" / "conflict.yaml").write_text(CONFLICT)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


# --- exit statuses -------------------------------------------------------------------------


def test_clean_spec_exits_0(project: Path) -> None:
    code, out, _ = run("lint", "specs/clean.yaml")
    assert code == 0
    assert out == "no findings in 1 file, 1 access.\n"


def test_findings_exit_1_with_gcc_style_lines(project: Path) -> None:
    code, out, _ = run("lint", "specs")
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(
        "specs/conflict.yaml:6:5: error: 2-way bank conflict in 'even words'"
    )
    assert lines[0].endswith("[SH001 bank-conflict]")
    assert lines[-1] == "1 finding (1 error) in 1 of 2 files, 2 accesses."


def test_exit_zero(project: Path) -> None:
    assert run("lint", "specs", "--exit-zero")[0] == 0


def test_missing_path_is_a_usage_error(project: Path) -> None:
    code, _, err = run("lint", "specs", "nope.yaml")
    assert code == 2
    assert "no such file or directory: nope.yaml" in err


def test_unknown_option_is_a_usage_error(project: Path) -> None:
    assert run("lint", "specs", "--fial-on", "error")[0] == 2


def test_bad_fail_on_value_is_a_usage_error(project: Path) -> None:
    assert run("lint", "specs", "--fail-on", "fatal")[0] == 2


def test_invalid_spec_is_reported_and_the_others_still_linted(project: Path) -> None:
    (project / "specs" / "broken.yaml").write_text(BROKEN)
    code, out, _ = run("lint", "specs", "--format", "json")
    assert code == 2  # an invalid spec: exit 2, as in every command
    doc = json.loads(out)
    assert [f["path"] for f in doc["files"]] == [
        "specs/broken.yaml",
        "specs/clean.yaml",
        "specs/conflict.yaml",
    ]
    by_code = {f["code"]: f for f in doc["findings"]}
    assert set(by_code) == {"SH100", "SH001"}
    bad = by_code["SH100"]
    assert (bad["rule"], bad["path"], bad["line"], bad["column"]) == (
        "invalid-spec",
        "specs/broken.yaml",
        6,
        12,
    )
    assert "'b'" in bad["message"]


def test_fail_on_warning_counts_warnings(project: Path) -> None:
    stale = CLEAN.replace("index: [tid]", "index: [tid]\n    expect: {conflict_free: false}")
    (project / "specs" / "clean.yaml").write_text(stale)
    assert run("lint", "specs/clean.yaml")[0] == 0  # a warning does not fail by default
    code, out, _ = run("lint", "specs/clean.yaml", "--fail-on", "warning")
    assert code == 1
    assert "warning:" in out and "[SH003 stale-expectation]" in out


def test_no_paths_and_no_config_is_a_usage_error(project: Path) -> None:
    code, _, err = run("lint")
    assert code == 2 and "no paths given" in err


def test_everything_excluded_is_not_an_error(project: Path) -> None:
    code, out, err = run("lint", "specs", "--exclude", "specs")
    assert (code, out) == (0, "")
    assert "no spec files to lint" in err


def test_exclude_by_file_name(project: Path) -> None:
    assert run("lint", "specs", "--exclude", "conflict.yaml")[0] == 0


def test_output_file_and_summary_on_stderr(project: Path) -> None:
    (project / "out").mkdir()  # shmem does not create folders for output files
    code, out, err = run("lint", "specs", "-f", "json", "-o", "out/report.json")
    assert code == 1 and out == ""
    assert json.loads((project / "out" / "report.json").read_text())["summary"]["findings"] == 1
    assert "1 finding" in err and "out/report.json" in err
    # -o - is standard output: the summary said "(report in -)"
    code, out, err = run("lint", "specs", "-f", "json", "-o", "-")
    assert code == 1 and json.loads(out)["summary"]["findings"] == 1
    assert err.endswith(" (report on standard output)\n"), err


def test_each_file_once_in_path_order(project: Path) -> None:
    code, out, _ = run("lint", "specs/conflict.yaml", "specs", "-f", "json")
    doc = json.loads(out)
    assert [f["path"] for f in doc["files"]] == ["specs/conflict.yaml", "specs/clean.yaml"]


# --- configuration ---------------------------------------------------------------------------


def test_config_paths_exclude_and_fail_on(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "k"\n\n[tool.shmem]\npaths = ["specs"]\n'
        'exclude = ["specs/conflict.yaml"]\n'
    )
    code, out, _ = run("lint")
    assert code == 0 and out == "no findings in 1 file, 1 access.\n"


def test_config_default_expect(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.shmem]\nexpect = {max_ways = 2}\n")
    assert run("lint", "specs")[0] == 0
    (project / "pyproject.toml").write_text("[tool.shmem.expect]\nconflict_free = true\n")
    assert run("lint", "specs")[0] == 1


def test_command_line_overrides_config(project: Path) -> None:
    stale = CLEAN.replace("index: [tid]", "index: [tid]\n    expect: {conflict_free: false}")
    (project / "specs" / "clean.yaml").write_text(stale)
    (project / "pyproject.toml").write_text('[tool.shmem]\nfail-on = "warning"\n')
    assert run("lint", "specs/clean.yaml")[0] == 1
    assert run("lint", "specs/clean.yaml", "--fail-on", "error")[0] == 0
    assert run("lint", "specs/clean.yaml", "--no-config")[0] == 0


def test_unknown_config_key_suggests_the_nearest(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[project]\nname = "k"\n\n[tool.shmem]\nfail_on = "error"\n'
    )
    code, out, err = run("lint", "specs")
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "pyproject.toml:5:1: error: unknown key 'fail_on' in [tool.shmem]; did you mean 'fail-on'?",
        '  5 | fail_on = "error"',  # the line, and a caret under the column
        "    | ^",
    ]


def test_unknown_expect_key_in_config(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.shmem]\nexpect = {max_way = 2}\n")
    code, _, err = run("lint", "specs")
    assert code == 2
    assert "pyproject.toml:2:1:" in err and "did you mean 'max_ways'?" in err


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[tool.shmem]\nfail-on = "fatal"\n', "fail-on must be one of error, warning, info"),
        ("[tool.shmem]\npaths = 3\n", "paths must be a list of strings"),
        ("[tool.shmem]\nexpect = {max_ways = 0}\n", "max_ways must be a positive integer"),
        ("[tool.shmem\n", "invalid TOML"),
    ],
)
def test_bad_config_values(project: Path, toml: str, message: str) -> None:
    (project / "pyproject.toml").write_text(toml)
    code, _, err = run("lint", "specs")
    assert code == 2 and message in err


@pytest.mark.parametrize(
    ("toml", "where", "message"),
    [
        ("tool = 5\n", "1:1", "[tool] must be a table"),
        ("[[tool.shmem]]\npaths = ['specs']\n", "1:1", "[tool.shmem] must be a table"),
        ("tool = {shmem = 5}\n", "1:1", "[tool.shmem] must be a table"),
        ("x = 1\ntool.shmem.fail-on = 'bogus'\n", "2:1", "fail-on must be one of"),
        ("[tool]\nshmem.expect.max_ways = -1\n", "2:1", "max_ways must be a positive"),
        ("[tool.shmem]\nfail-on = 'error'\nfail-on = 'info'\n", "3:17", "Cannot overwrite"),
        ("\ufeff[tool.shmem]\n", "1:1", "a byte-order mark?"),
        ('[tool.shmem]\npaths = ["a\\u0000b"]\n', "2:1", "paths: a string holds a NUL"),
        # values as the file writes them, and short (a 5,000-character string, a huge int)
        ("[tool.shmem.expect]\nmax_ways = true\n", "2:1", "integer, got true"),
        ('[tool.shmem.expect]\nmax_ways = "2"\n', "2:1", 'integer, got "2"'),
        ("[tool.shmem.expect]\nconflict_free = 1\n", "2:1", "true or false, got 1"),
        (f'[tool.shmem]\nfail-on = "{"x" * 5000}"\n', "2:1", 'info, got "xxx'),
        (f"[tool.shmem.expect]\nmax_ways = -{'9' * 4000}\n", "2:1", "integer, got -999"),
    ],
)
def test_hostile_config_shapes_are_located(
    project: Path, toml: str, where: str, message: str
) -> None:
    """A [tool] that is no table, an array of tables, dotted and inline keys, tomllib's own
    errors: each at its line and column (a table not spelled as a header ended in a
    traceback: IndexError, AttributeError)."""
    (project / "pyproject.toml").write_text(toml, encoding="utf-8")
    code, _, err = run("lint", "specs")
    assert code == 2 and f"pyproject.toml:{where}: error: " in err and message in err, err
    assert len(err) < 2000, err  # a value is shown short
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("key", "strings", "message"),
    [
        ("exclude", [f"wip{i}/*" for i in range(1001)], "exclude has 1,001 strings; the most"),
        ("source-roots", ["a"] * 5000, "source-roots has 5,000 strings"),
        ("exclude", ["*a" * 2048 + "b"], "exclude: a string of 4,097 characters; the most"),
    ],
)
def test_config_lists_are_bounded(
    project: Path, monkeypatch: pytest.MonkeyPatch, key: str, strings: list[str], message: str
) -> None:
    """Every spec is matched against every exclude pattern, and a long glob is slow to build
    and to match: 300,000 patterns ran past 200 s on 40 specs, one of 400 KB took 48 s."""
    from shmem_cli.lint import paths

    matched: list[str] = []
    monkeypatch.setattr(paths, "fnmatchcase", lambda name, pat: matched.append(pat) or False)
    (project / "pyproject.toml").write_text(f"[tool.shmem]\n{key} = {json.dumps(strings)}\n")
    code, _, err = run("lint", "specs")
    assert code == 2 and f"pyproject.toml:2:1: error: [tool.shmem] {message}" in err, err
    assert matched == []  # refused before any spec was matched
    # at the bounds: 1,000 patterns, one of 4,096 characters and 16 wildcards, each matched
    at_bound = [*(f"wip{i}/*" for i in range(999)), "*a" * 16 + "a" * 4062 + "bc"]
    (project / "pyproject.toml").write_text(f"[tool.shmem]\nexclude = {json.dumps(at_bound)}\n")
    assert run("lint", "specs")[0] != 2
    assert set(at_bound) <= set(matched)


@pytest.mark.parametrize(
    ("strings", "message"),
    [
        ([f"wip{i}/*" for i in range(1001)], "--exclude has 1,001 strings; the most is 1,000"),
        (["*a" * 2048 + "b"], "--exclude: a string of 4,097 characters; the most is 4,096"),
    ],
)
def test_exclude_options_are_bounded_as_the_config_s_list(
    project: Path, monkeypatch: pytest.MonkeyPatch, strings: list[str], message: str
) -> None:
    """--exclude given many times is bounded as [tool.shmem] exclude is: a usage error
    before any spec is matched (each spec is matched against every pattern)."""
    from shmem_cli.lint import paths

    matched: list[str] = []
    monkeypatch.setattr(paths, "fnmatchcase", lambda name, pat: matched.append(pat) or False)
    args = [a for s in strings for a in ("--exclude", s)]
    code, _, err = run("lint", "specs", *args)
    assert code == 2 and message in err and "Traceback" not in err, err
    assert matched == []
    if len(strings) > 1:  # at the bound, 1,000 patterns: each matched
        assert run("lint", "specs", *args[: 2 * 1000])[0] != 2
        assert set(strings[:1000]) <= set(matched)


def test_source_roots_on_the_command_line_are_bounded(tmp_path: Path) -> None:
    code, _, err = run(
        "trace", str(TRACE_DATA / "basics.sm_90.cubin"), "--block", "32",
        *[a for i in range(1001) for a in ("--source-root", str(tmp_path / f"r{i}"))],
    )  # fmt: skip
    assert code == 2 and "--source-root has 1,001 strings; the most is 1,000" in err, err


def test_a_config_past_1_mib_is_refused_unread(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tomllib reads `x = [1, 1, ...]` at about 0.1 MB a second: 16 MiB took minutes."""
    import tomllib

    from shmem_cli.lint import config

    assert config.MAX_CONFIG_BYTES == 1 << 20
    parsed: list[int] = []
    loads = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(len(text)) or loads(text))
    head = "[tool.shmem]\npaths = ['specs']\n#"

    def sized(size: int) -> str:  # a comment to the size: the quickest text to parse
        return head + "x" * (size - len(head) - 1) + "\n"

    (project / "pyproject.toml").write_text(sized(config.MAX_CONFIG_BYTES))
    assert run("lint", "specs")[0] != 2 and parsed == [config.MAX_CONFIG_BYTES]
    (project / "pyproject.toml").write_text(sized(config.MAX_CONFIG_BYTES + 1))
    code, _, err = run("lint", "specs")
    assert code == 2 and "pyproject.toml: error: " in err and "1 MiB" in err, err
    assert parsed == [config.MAX_CONFIG_BYTES]  # the larger file was never parsed


def test_config_not_utf8_is_located(project: Path) -> None:
    (project / "pyproject.toml").write_bytes(b"[tool.shmem]\nfail-on = '\xe9'\n")
    code, _, err = run("lint", "specs")
    assert code == 2
    assert "pyproject.toml:2:12: error: cannot read config: byte 0xe9 is not UTF-8" in err


def test_explicit_config_file(project: Path) -> None:
    (project / "ci.toml").write_text('[tool.shmem]\nexclude = ["conflict.yaml"]\n')
    assert run("lint", "specs", "--config", "ci.toml")[0] == 0
    assert run("lint", "specs", "--config", "missing.toml")[0] == 2


# --- baselines ---------------------------------------------------------------------------------


def test_baseline_accepts_todays_findings_and_fails_on_new_ones(project: Path) -> None:
    code, out, err = run("lint", "specs", "--write-baseline", "base.json")
    assert code == 0 and "wrote 1 finding to base.json" in err
    entries = json.loads((project / "base.json").read_text())["findings"]
    assert [(e["file"], e["access"], e["rule"]) for e in entries] == [
        ("specs/conflict.yaml", "even words", "SH001")
    ]
    code, out, _ = run("lint", "specs", "--baseline", "base.json")
    assert code == 0
    assert out == "no findings in 2 files, 2 accesses; 1 accepted by the baseline.\n"

    # a second conflicted access is new, even in the same file and for the same rule
    more = CONFLICT + "  - name: stride four\n    array: a\n    index: [(4 * tid) % 64]\n"
    (project / "specs" / "conflict.yaml").write_text("# moved down\n" + more)
    code, out, _ = run("lint", "specs", "--baseline", "base.json", "-f", "json")
    assert code == 1
    doc = json.loads(out)
    assert [f["access"] for f in doc["findings"]] == ["stride four"]
    assert doc["summary"]["baselined"] == 1


def test_baseline_reports_entries_that_no_longer_occur(project: Path) -> None:
    run("lint", "specs", "--write-baseline", "base.json")
    (project / "specs" / "conflict.yaml").write_text(CONFLICT.replace("2 * tid", "tid"))
    code, out, _ = run("lint", "specs", "--baseline", "base.json")
    assert code == 0 and "1 baseline entry no longer occur" in out


def test_baseline_from_config(project: Path) -> None:
    run("lint", "specs", "--write-baseline", "base.json")
    (project / "pyproject.toml").write_text('[tool.shmem]\nbaseline = "base.json"\n')
    assert run("lint", "specs")[0] == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "baseline file not found"),
        ("{not json", "not valid JSON"),
        ('{"schema_version": 1}', "not a shmem baseline"),
        ('{"schema_version": 9, "findings": []}', "unsupported baseline schema_version 9"),
        ('{"schema_version": 1, "findings": [{"file": 1}]}', "baseline entry 0"),
    ],
)
def test_bad_baseline_is_a_usage_error(project: Path, content: str | None, message: str) -> None:
    if content is not None:
        (project / "base.json").write_text(content)
    code, _, err = run("lint", "specs", "--baseline", "base.json")
    assert code == 2 and message in err


def test_baseline_is_written_atomically_and_sorted(project: Path) -> None:
    (project / "specs" / "a.yaml").write_text(CONFLICT)
    run("lint", "specs", "--write-baseline", "base.json")
    files = [e["file"] for e in json.loads((project / "base.json").read_text())["findings"]]
    assert files == ["specs/a.yaml", "specs/conflict.yaml"]
    assert [p.name for p in project.iterdir() if p.name.startswith(".base.json")] == []


# --- shmem rules --------------------------------------------------------------------------------


def test_rules_lists_every_rule() -> None:
    code, out, _ = run("rules")
    assert code == 0
    assert [line.split()[:3] for line in out.splitlines()] == [
        ["SH001", "bank-conflict", "error"],
        ["SH002", "expectation-exceeded", "error"],
        ["SH003", "stale-expectation", "warning"],
        ["SH004", "loose-expectation", "info"],
        ["SH005", "idle-access", "warning"],
        ["SH006", "loop-invariant-access", "warning"],
        ["SH007", "compiled-mismatch", "error"],
        ["SH008", "compiled-coverage", "warning"],
        ["SH009", "likely-vectorized", "warning"],
        ["SH100", "invalid-spec", "error"],
    ]


def test_rules_documents_one_rule() -> None:
    code, out, _ = run("rules", "bank-conflict")
    assert code == 0
    assert out.startswith(
        "SH001 bank-conflict (error)\nAn access has bank conflicts that nothing accepts.\n"
    )
    assert "expect: {max_ways: 2}" in out
    assert run("rules", "SH999")[0] == 2


def test_rules_json() -> None:
    code, out, _ = run("rules", "-f", "json")
    records = json.loads(out)
    assert [r["code"] for r in records][:2] == ["SH001", "SH002"]
    assert records[0]["severity"] == "error" and "conflict-free" in records[0]["description"]


# --- issue 15: invalid specs, --select/--ignore --------------------------------------------

# two schema errors: an unknown key and a missing index
TWO_ERRORS = (
    "name: two\nblock: [32]\narrays:\n  a: {dtype: float, shape: [32], shpae: 1}\n"
    "accesses:\n  - array: a\n"
)


def test_lint_reports_every_schema_error_and_exits_2(project: Path) -> None:
    (project / "specs" / "two.yaml").write_text(TWO_ERRORS)
    for extra in ((), ("--exit-zero",)):
        code, out, _ = run("lint", "specs/two.yaml", "--format", "json", *extra)
        assert code == 2
        found = [(f["code"], f["line"]) for f in json.loads(out)["findings"]]
        assert found == [("SH100", 4), ("SH100", 6)]
    # and analyze reports the same two
    analyze = CliRunner().invoke(main, ["analyze", "specs/two.yaml", "--format", "json"])
    assert analyze.exit_code == 2
    assert len([line for line in analyze.stderr.splitlines() if ": error: " in line]) == 2


def codes_found(*args: str) -> list[str]:
    code, out, err = run("lint", "specs", "--format", "json", "--exit-zero", *args)
    assert code == 0, err
    return sorted({f["code"] for f in json.loads(out)["findings"]})


STALE = CLEAN.replace("index: [tid]", "index: [tid]\n    expect: {max_ways: 4}")


def test_select_and_ignore_by_code_prefix_and_name(project: Path) -> None:
    (project / "specs" / "clean.yaml").write_text(STALE)  # SH003 stale-expectation
    assert codes_found() == ["SH001", "SH003"]
    assert codes_found("--select", "SH001") == ["SH001"]
    assert codes_found("--select", "stale-expectation") == ["SH003"]
    assert codes_found("--select", "SH00") == ["SH001", "SH003"]
    assert codes_found("--ignore", "bank-conflict") == ["SH003"]
    assert codes_found("--ignore", "SH001,SH003") == []
    assert codes_found("--select", "SH001", "--select", "SH003", "--ignore", "sh003") == ["SH001"]


def test_select_and_ignore_in_pyproject(project: Path) -> None:
    (project / "specs" / "clean.yaml").write_text(STALE)
    (project / "pyproject.toml").write_text('[tool.shmem]\nignore = ["SH001"]\n')
    assert codes_found() == ["SH003"]
    assert codes_found("--ignore", "SH003") == ["SH001"]  # the flag replaces the key
    (project / "pyproject.toml").write_text('[tool.shmem]\nselect = ["bank-conflict"]\n')
    assert codes_found() == ["SH001"]


def test_unknown_rule_is_a_usage_error(project: Path) -> None:
    code, _, err = run("lint", "specs", "--select", "SH999")
    assert code == 2 and "unknown rule 'SH999'" in err and "SH001 (bank-conflict)" in err
    (project / "pyproject.toml").write_text('[tool.shmem]\n\nignore = ["bank-conflicts"]\n')
    code, _, err = run("lint", "specs")
    assert code == 2 and "pyproject.toml:3:1: error: [tool.shmem] ignore: unknown rule" in err


def test_invalid_spec_cannot_be_ignored(project: Path) -> None:
    (project / "specs" / "broken.yaml").write_text(BROKEN)
    code, out, _ = run("lint", "specs", "--format", "json", "--ignore", "SH100")
    assert code == 2
    assert "SH100" in {f["code"] for f in json.loads(out)["findings"]}
