"""The folder walk of ``analyze``, ``lint`` and ``verify`` (spec.spec_files) never hangs: a
FIFO named like a spec is never opened (a read of it would wait for a writer for ever), a
loop of links (folders linking back up, files linking to each other) is never followed, and
past :data:`MAX_SECONDS` a slow tree stops with the folder's error, the other paths still
analyzed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from shmem_cli.spec import spec_files
from shmem_cli.spec.spec_files import find_specs

from .conftest import ROOT
from .hostile import shmem

GOOD = ROOT / "access_specs" / "column_read_32x33.yaml"


def _hostile_tree(top: Path) -> Path:
    """A tree with one spec, FIFOs named like specs and loops of links."""
    tree = top / "tree"
    (tree / "sub").mkdir(parents=True)
    shutil.copy(GOOD, tree / "sub" / "good.yaml")
    os.mkfifo(tree / "pipe.yaml")
    os.mkfifo(tree / "sub" / "pipe.yml")
    (tree / "sub" / "up").symlink_to("..")  # a folder linking back to its parent
    (tree / "sub" / "self").symlink_to(".")
    (tree / "a.yaml").symlink_to("b.yaml")  # two links to each other
    (tree / "b.yaml").symlink_to("a.yaml")
    return tree


@pytest.mark.parametrize("command", ["analyze", "lint"])
def test_a_fifo_and_link_loops_are_skipped_not_waited_on(tmp_path: Path, command: str) -> None:
    tree = _hostile_tree(tmp_path)
    ran = shmem(command, "tree", cwd=tmp_path, timeout=60)  # a FIFO opened: a hang
    assert "Traceback" not in ran.text
    assert ran.code in (0, 1), ran.text[-2000:]
    said = " ".join(ran.text.split())
    assert ("1 file(s), 2 access(es)" if command == "analyze" else "1 file") in said, said[-2000:]
    assert "skipped tree/pipe.yaml: a FIFO (named pipe), not a regular file" in said
    found = find_specs([tree])
    assert found.paths == (tree / "sub" / "good.yaml",)  # once: no loop walked into it
    skipped = dict(found.skipped)
    assert skipped[tree / "pipe.yaml"] == "a FIFO (named pipe), not a regular file"
    assert skipped[tree / "sub" / "pipe.yml"] == "a FIFO (named pipe), not a regular file"
    assert skipped[tree / "a.yaml"] == "a link to no file (or a loop of links)"


def test_a_slow_walk_stops_at_its_time_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a file system that takes 5 s a folder: the fifth folder is past the 20 s bound
    tree = tmp_path / "slow"
    folder = tree
    for _ in range(10):
        folder = folder / "d"
        folder.mkdir(parents=True)
        shutil.copy(GOOD, folder / "s.yaml")
    clock = iter(range(0, 10_000, 5))
    monkeypatch.setattr(spec_files.time, "monotonic", lambda: float(next(clock)))
    found = find_specs([tree, GOOD])
    assert found.paths == (tree, GOOD)  # none of its specs, the other path's still
    why = found.error_of(tree)
    assert why is not None
    assert why.startswith("the search for spec files stopped at 20 seconds (")
    assert "a slow or huge tree) in this folder (the limit), and none of its specs" in why
