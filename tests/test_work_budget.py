"""The work budget (shmem_cli/spec/budget.py) and the cap on listed problems
(shmem_cli/plumbing/errors.py): refused up front, located, exit 2 (docs/robustness.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.spec import budget, source
from shmem_cli.spec.source import load_yaml

HEAD = """\
block: [1024]
arrays:
  a: {dtype: float32, shape: [32, 33]}
accesses:
"""


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return result.exit_code, result.stdout + result.stderr


def long_expression(chars: int) -> str:
    """A valid index expression of about ``chars`` characters, in bounds for a[32][33]."""
    terms = []
    n = 0
    while n < chars:
        term = f"(lane * {len(terms) + 1} + threadIdx.x % {len(terms) + 2})"
        terms.append(term)
        n += len(term) + 3
    return f"({' + '.join(terms)}) % 32"


def test_merge_keys_repeating_a_long_expression(tmp_path: Path) -> None:
    expression = long_expression(3400)
    lines = [HEAD.rstrip("\n"), f"  - &b {{name: a0, array: a, index: ['{expression}', 0]}}"]
    lines += [f"  - {{<<: *b, name: a{i}}}" for i in range(1, 1400)]  # 4.7 MB of text
    spec = tmp_path / "merge.yaml"
    spec.write_text("\n".join(lines) + "\n")
    assert spec.stat().st_size < 100_000
    code, out = run("analyze", "--no-tables", str(spec))
    assert code == 2
    assert re.search(rf"{re.escape(str(spec))}:5:\d+: error: the spec's text adds up to more", out)
    assert "aliases and merge keys" in out


def limit_access(name: str) -> str:
    return (
        f"  - name: {name}\n    array: a\n    loop: {{i: 0..2097151}}\n"  # 2^21 x 1024 = 2^31
        "    index: [(lane + i) % 32, (threadIdx.x / 32 + i) % 33]\n"
    )


def test_many_accesses_at_the_lane_access_limit(tmp_path: Path) -> None:
    spec = tmp_path / "fifty.yaml"
    spec.write_text(HEAD + "".join(limit_access(f"r{i}") for i in range(50)))
    code, out = run("analyze", "--no-tables", str(spec))
    assert code == 2
    assert f"{spec}:9:5: error: with access 'r1' the spec needs 4.29e+09 units of work" in out
    assert "the limit is 2147483648 (2^31) per spec" in out


def test_long_expressions_weigh_more(tmp_path: Path) -> None:
    expression = long_expression(450)  # 482 characters: 8 units per lane-access
    spec = tmp_path / "heavy.yaml"
    spec.write_text(
        HEAD + "  - name: heavy\n    array: a\n    loop: {i: 0..524287}\n"  # 2^29 lane-accesses
        f"    index: ['{expression}', 0]\n"
    )
    code, out = run("analyze", "--no-tables", str(spec))
    assert code == 2
    assert f"{spec}:5:5: error: with access 'heavy' the spec needs 4.29e+09 units" in out


def test_weight_counts_index_and_when() -> None:
    from shmem_cli.spec.compile import spec_from_mapping

    index = "lane + " * 30 + "0"  # 211 characters
    when = "lane < 64 && " * 7 + "1"  # 92 characters
    spec = spec_from_mapping(
        {
            "block": [32],
            "arrays": {"a": {"dtype": "float32", "shape": [256]}},
            "accesses": [
                {"name": "short", "array": "a", "index": ["lane"]},
                {"name": "long", "array": "a", "index": [index], "when": when},
            ],
        }
    )
    assert [budget.weight(a) for a in spec.accesses] == [1, 5]  # ceil(303 / 64)


def test_suggest_does_not_search_beyond_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "column.yaml"
    spec.write_text(
        "block: [32]\narrays:\n  a: {dtype: float32, shape: [32, 32]}\naccesses:\n"
        "  - name: col\n    array: a\n    loop: {i: 0..1023}\n    index: [lane, i % 32]\n"
    )
    code, out = run("analyze", "--no-tables", "--suggest", str(spec))
    assert code == 0 and "cheapest fix" in out  # within the budget: searched
    import shmem_cli.analysis.sweep.evaluate as evaluate

    monkeypatch.setattr(evaluate, "CACHE_LANES", 1024)  # too big for the cache: per layout
    monkeypatch.setattr(budget, "MAX_SEARCH_WORK", 32 * 1024 * 10)
    code, out = run("analyze", "--no-tables", "--suggest", str(spec))
    assert code == 0
    assert "not searched: trying" in out and "run shmem sweep" in out


def test_thousands_of_unknown_keys_are_counted(tmp_path: Path) -> None:
    spec = tmp_path / "keys.yaml"
    spec.write_text(
        "block: [32]\narrays:\n  a: {dtype: float32, shape: [32]}\naccesses:\n"
        "  - {name: r, array: a, index: [lane]}\n" + "".join(f"k{i}: 1\n" for i in range(5000))
    )
    code, out = run("analyze", "--format", "json", str(spec))
    assert code == 2
    errors = [line for line in out.splitlines() if ": error: " in line]
    assert len(errors) == 21
    assert errors[0].startswith(f"{spec}:6:1: error: unknown key 'k0'")
    assert errors[-1] == (
        f"{spec}:26:1: error: ... and 4,980 more unknown key problems "
        "(the first 20 are listed; fix them and run again)"
    )


def test_few_problems_are_all_listed(tmp_path: Path) -> None:
    spec = tmp_path / "keys.yaml"
    spec.write_text(
        "block: [32]\narrays:\n  a: {dtype: float32, shape: [32]}\naccesses:\n"
        "  - {name: r, array: a, index: [lane]}\n" + "".join(f"k{i}: 1\n" for i in range(20))
    )
    code, out = run("analyze", "--format", "json", str(spec))
    assert code == 2
    assert len([line for line in out.splitlines() if ": error: " in line]) == 20
    assert "more unknown key" not in out


@pytest.mark.slow
def test_more_accesses_than_a_spec_may_hold(tmp_path: Path) -> None:
    """Each access costs its analysis and its report whatever its size: 12,000 one-line
    accesses (a 0.6 MB file) took 17 s and 720 MB of JSON. Past 1,000 the spec is refused at
    the first access over the limit (line 5 + 1,000: the accesses start at line 5)."""
    head = HEAD.replace("[1024]", "[32]")
    spec = tmp_path / "many.yaml"
    spec.write_text(
        head + "".join(f"  - {{name: r{i}, array: a, index: [lane, 0]}}\n" for i in range(1001))
    )
    code, out = run("analyze", "--no-tables", str(spec))
    assert code == 2
    assert f"{spec}:1005:5: error: the spec has 1,001 accesses; the limit is 1,000 per spec" in out
    at_limit = head + "".join(
        f"  - {{name: r{i}, array: a, index: [lane, 0]}}\n" for i in range(1000)
    )
    budget.check_accesses(load_yaml(at_limit, "limit.yaml"))  # 1,000 is allowed


def test_a_spec_file_past_2_mib_is_refused_before_yaml_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyYAML reads plain words at about 0.6 MB a second: 8 MiB of them (the old limit) took
    17 s before any bound could refuse the spec. The size is checked before a YAML reader
    exists: one made fails the test."""

    def no_reader(*args: object) -> None:
        raise AssertionError("YAML was read before the size was checked")

    monkeypatch.setattr(source, "Loader", no_reader)
    spec = tmp_path / "words.yaml"
    spec.write_text("block: [32]\nname: " + "x " * (1 << 20) + "\n")  # read to one byte past
    code, out = run("analyze", str(spec))
    assert code == 2
    # read to one byte past the limit: its size is not said (it said 2097153 bytes of any)
    assert (
        f"{spec}: error: spec file too large: more than 2,097,152 bytes (the limit, 2 MiB); "
        "split it into smaller specs" in " ".join(out.split())
    )
