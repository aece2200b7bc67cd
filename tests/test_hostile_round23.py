"""Hostile inputs of the twenty-third adversarial round (docs/robustness.md, "What was found
and fixed", item 23).

A file name that is not UTF-8 reached every JSON output (``analyze``, ``sweep``, ``lint``'s
JSON, SARIF and baselines) as a lone surrogate escape (``"bad\\udcff.yaml"``), which strict
JSON parsers refuse; each stray byte is written as the text ``\\xff`` now
(``plumbing.json_text``), and a baseline matches its findings by the same spelling.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from shmem_cli.plumbing import json_text

from .hostile import shmem

ROOT = Path(__file__).resolve().parent.parent
COLUMN = ROOT / "access_specs" / "column_read_32x32.yaml"
#: a name with a byte that is no UTF-8 (0xff), as os.fsdecode gives it
BAD = os.fsdecode(b"bad\xff.yaml")


def _strict(text: str) -> object:
    """The JSON text read as a strict parser reads it: UTF-8 and no lone surrogate."""
    text.encode("utf-8")  # raises on a lone surrogate written raw
    unpaired = re.sub(r"\\ud[89ab][0-9a-f]{2}\\ud[c-f][0-9a-f]{2}", "", text.replace("\\\\", ""))
    assert not re.search(r"\\ud[89a-f]", unpaired), text[:2000]
    return json.loads(text)


def _conflicting(folder: Path) -> Path:
    spec = folder / BAD
    spec.write_text(COLUMN.read_text().replace("{max_ways: 32}", "{conflict_free: true}"))
    return spec


def test_a_stray_byte_is_spelled_and_other_text_kept() -> None:
    assert json_text.spelled(os.fsdecode(b"a\xff\x80b")) == "a\\xff\\x80b"
    assert json_text.spelled("\ud800x") == "\\ud800x"
    assert json_text.spelled("caf\u00e9 \U0001f600") == "caf\u00e9 \U0001f600"
    doc = {BAD: [BAD, {"k": BAD}], "n": 1, "e": "\U0001f600"}
    for ascii_only in (True, False):
        text = json_text.dumps(doc, ensure_ascii=ascii_only)
        assert _strict(text) == {
            "bad\\xff.yaml": ["bad\\xff.yaml", {"k": "bad\\xff.yaml"}],
            "n": 1,
            "e": "\U0001f600",
        }


@pytest.mark.parametrize(
    "args",
    [
        ("analyze", "--format", "json", "."),
        ("lint", "--format", "json", "."),
        ("lint", "--format", "sarif", "."),
        ("sweep", BAD, "--pad", "0,1", "--format", "json"),
    ],
)
def test_every_json_output_names_a_non_utf8_file_in_valid_json(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    _conflicting(tmp_path)
    ran = shmem(*args, cwd=tmp_path)
    assert ran.code in (0, 1), ran.text[-2000:]
    doc = _strict(ran.stdout)
    said = json.dumps(doc)
    assert "bad%FF.yaml" in said if "sarif" in args else "bad\\\\xff.yaml" in said


def test_a_baseline_of_a_non_utf8_name_is_valid_json_and_still_matches(tmp_path: Path) -> None:
    _conflicting(tmp_path)
    wrote = shmem("lint", "--write-baseline", "b.json", ".", cwd=tmp_path)
    assert wrote.code == 0, wrote.text[-2000:]
    doc = _strict((tmp_path / "b.json").read_text())
    assert isinstance(doc, dict)
    assert [f["file"] for f in doc["findings"]] == ["bad\\xff.yaml"]
    ran = shmem("lint", "--baseline", "b.json", ".", cwd=tmp_path)
    assert ran.code == 0, ran.text[-2000:]
    assert "1 accepted by the baseline" in ran.text
    shutil.copy(tmp_path / BAD, tmp_path / "other.yaml")  # not baselined: still a finding
    assert shmem("lint", "--baseline", "b.json", ".", cwd=tmp_path).code == 1
