"""Leftovers of robustness round 23 (docs/robustness.md, round 23b).

* A file name's byte that is not UTF-8 is spelled ``\\xff`` in every output, text, GitHub
  annotations, JUnit and standard error alike, as the JSON outputs spell it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .hostile import shmem

ROOT = Path(__file__).resolve().parent.parent
COLUMN = ROOT / "access_specs" / "column_read_32x32.yaml"
#: a name with a byte that is no UTF-8 (0xff), as os.fsdecode gives it
BAD = os.fsdecode(b"bad\xff.yaml")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("lint", "."), "bad\\xff.yaml:20:5: error: 32-way bank conflict"),
        (("lint", "--format", "github", "."), "::error file=bad\\xff.yaml,line=20,col=5,"),
        (("lint", "--format", "junit", "."), '<testsuite name="bad\\xff.yaml"'),
        (("analyze", "."), "bad\\xff.yaml  column read, tile[32][32]"),
    ],
)
def test_a_stray_byte_of_a_file_name_is_spelled_as_json_spells_it_in_text_outputs(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    (tmp_path / BAD).write_text(
        COLUMN.read_text().replace("{max_ways: 32}", "{conflict_free: true}")
    )
    code = 0 if args[0] == "analyze" else 1  # the lint's finding fails it
    ran = shmem(*args, cwd=tmp_path)
    assert ran.code == code, ran.text[-2000:]
    assert said in ran.stdout, ran.stdout[-2000:]
    assert "udcff" not in ran.stdout
    wrote = shmem(*args[:-1], "-o", "out.txt", ".", cwd=tmp_path)  # and in a file
    assert wrote.code == code, wrote.text[-2000:]
    assert said in (tmp_path / "out.txt").read_text()


def test_a_stray_byte_is_spelled_so_on_standard_error(tmp_path: Path) -> None:
    shutil.copy(COLUMN, tmp_path / "good.yaml")
    ran = shmem("analyze", os.fsdecode(b"nope\xfe"), cwd=tmp_path)
    assert ran.code == 2
    assert "shmem: error: no such file or directory: nope\\xfe" in ran.stderr, ran.stderr
