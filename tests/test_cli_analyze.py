"""`shmem analyze`: output formats, several inputs, request selection, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import ROOT

SPECS = ROOT / "access_specs"

COLUMN = """\
name: column
block: [32, 2]
arrays:
  tile: {dtype: float32, shape: [32, 32], pad: PAD}
accesses:
  - name: column read
    array: tile
    index: [threadIdx.x, threadIdx.y + 2*k]
    loop: {k: 0..1}
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_text_summary_numbers(tmp_path: Path) -> None:
    spec = write(tmp_path, "c.yaml", COLUMN.replace("PAD", "0"))
    code, out, _ = run("analyze", str(spec))
    assert code == 0
    # 2 warps x 2 iterations = 4 requests, each 32 wavefronts (32-way)
    line = next(ln for ln in out.splitlines() if "column read" in ln and "load" in ln)
    cells = line.split()
    assert cells[0] == "32-way"
    # requests, wavefronts, ideal, excess, ways, efficiency: the last six columns (no cycles
    # column: the estimate equals the wavefronts for 4-byte accesses)
    assert cells[-6:] == ["4", "128", "4", "124", "32", "3.1%"]
    assert "\x1b[" not in out  # no color when not a terminal
    assert "worst bank 32-way" in out


def test_json_totals_and_schema_version(tmp_path: Path) -> None:
    a = write(tmp_path, "a.yaml", COLUMN.replace("PAD", "0"))
    b = write(tmp_path, "b.yaml", COLUMN.replace("PAD", "1"))
    code, out, _ = run("analyze", str(a), str(b), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["schema_version"] == 1
    (fa, fb) = doc["files"]
    acc_a, acc_b = fa["accesses"][0], fb["accesses"][0]
    assert (
        acc_a["requests"],
        acc_a["wavefronts"],
        acc_a["ideal_wavefronts"],
        acc_a["max_ways"],
    ) == (4, 128, 4, 32)
    assert (acc_b["requests"], acc_b["wavefronts"], acc_b["max_ways"]) == (4, 4, 1)
    assert {"name", "array", "op"} <= set(acc_a)


def test_directory_recursion_and_bad_file_does_not_hide_others(tmp_path: Path) -> None:
    sub = tmp_path / "nested"
    sub.mkdir()
    write(sub, "good.yml", COLUMN.replace("PAD", "1"))
    write(tmp_path, "bad.yaml", "block: [32]\narrays: {}\naccesses: [\n")
    write(tmp_path, "notes.txt", "ignored")
    code, out, err = run("analyze", str(tmp_path), "--format", "json")
    assert code == 2
    doc = json.loads(out)
    by_name = {Path(f["path"]).name: f for f in doc["files"]}
    assert set(by_name) == {"good.yml", "bad.yaml"}
    assert by_name["good.yml"]["accesses"][0]["wavefronts"] == 4
    assert by_name["bad.yaml"]["error"]["line"] == 4
    assert "bad.yaml:4:1: error:" in err
    assert "Traceback" not in out + err


def test_request_option_picks_warp_and_iteration(tmp_path: Path) -> None:
    spec = write(tmp_path, "c.yaml", COLUMN.replace("PAD", "0"))
    code, out, _ = run("analyze", str(spec), "--request", "1:1")
    assert code == 0
    assert "warp 1, k=1: 32 wavefront(s)" in out
    code, _, err = run("analyze", str(spec), "--request", "9")
    assert code == 2 and "outside" in (err + _)


def test_missing_path_is_usage_error() -> None:
    code, _, err = run("analyze", "does/not/exist.yaml")
    assert code == 2
    assert "no such file or directory" in err


def test_bundled_examples_all_analyze() -> None:
    code, out, err = run("analyze", str(SPECS), "--no-tables")
    assert code == 0, err
    assert "invalid" not in out.splitlines()[-1]


def test_help_and_version() -> None:
    code, out, _ = run("--version")
    assert code == 0 and out.startswith("shmem, version ")
    for cmd in ("analyze", "schema"):
        code, out, _ = run(cmd, "-h")
        assert code == 0 and "Usage:" in out


def test_schema_command_prints_draft7() -> None:
    code, out, _ = run("schema")
    assert code == 0
    doc = json.loads(out)
    assert doc["$schema"].startswith("http://json-schema.org/draft-07/schema")
    assert set(doc["required"]) >= {"block", "arrays", "accesses"}
