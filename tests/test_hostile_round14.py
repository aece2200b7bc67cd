"""Hostile inputs of the fourteenth adversarial round (docs/robustness.md, "What was found and
fixed", item 14). Each ends with a result or a located error (exit status 2), within the
60 s and 2 GB a judge allows, and reads nothing outside what it was given
(:func:`tests.hostile.refused`).

The kernels are tests/data/hostile/hostile4.cu (its cubin kept; build.sh there).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shmem_cli.trace.emulator import budget

from .conftest import TEST_DATA, needs_nvdisasm
from .hostile import HOSTILE, quiet, refused, shmem

CUBIN4 = HOSTILE / "hostile4.sm_90.cubin"
# the loop of hostile4.cu's alone: lines 10-11, SASS 0x0120-0x0160 (nvdisasm of the kept cubin)
ALONE_LOOP = "looping in hostile4.cu:10-11 (pc 0x0120-0x0160)"
SOFTMAX = TEST_DATA / "triton/cache/4SGPYMGJCKR2SIRCQ6L7K3M4GQ5ESPIW45W5I2LMJFJ2WNCHLKEA"


def _alone(*args: str) -> tuple[str, ...]:
    return ("trace", str(CUBIN4), "-k", "alone", "-b", "1024", "--no-tables", *args)


def test_the_default_time_limit_leaves_room_in_a_minute() -> None:
    # a judge allows a hostile input about 60 s; start-up, nvdisasm and the report come on top
    # of the launch's wall time, which was 180 s by default
    assert budget.SECONDS <= 45
    assert budget.DEFAULT.seconds == budget.SECONDS


@needs_nvdisasm
def test_one_thread_looping_alone_is_stopped_at_its_loop() -> None:
    ran = shmem(*_alone("--time-limit", "1"))
    refused(
        ran,
        "hostile4.cu:10:1: error: the trace ran past its time limit of 1 s in block (0,0,0), ",
        ALONE_LOOP,
        "raise --time-limit",
    )


@needs_nvdisasm
@pytest.mark.slow  # the default time limit, 40 s
def test_one_thread_looping_alone_ends_within_a_minute_by_default() -> None:
    # the block's budget (524,288 instructions a thread x 1,024 threads) counts
    # thread-instructions; each step ran the looping thread alone (about 6 us), so the budget
    # stood for 536 million steps, and the 180 s time limit stopped it (182 s, 78 MB)
    ran = shmem(*_alone(), timeout=90)
    said = f"error: the trace ran past its time limit of {budget.SECONDS:g} s in block (0,0,0)"
    refused(ran, f"hostile4.cu:10:1: {said}", ALONE_LOOP, seconds=60)


def _cache_with_a_linked_entry(tmp_path: Path) -> tuple[Path, Path]:
    """A repository whose cache root holds one entry folder that is a link to a copy of a
    real entry outside the repository; (the root, the folder linked to)."""
    repo, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    (repo / ".git").mkdir(parents=True)
    (repo / "cache").mkdir()
    shutil.copytree(SOFTMAX, elsewhere)
    (repo / "cache" / "LINKED").symlink_to(elsewhere, target_is_directory=True)
    return repo / "cache", elsewhere


@needs_nvdisasm
@pytest.mark.parametrize("kernel", [(), ("-k", "softmax_rows")])
def test_an_entry_folder_linked_outside_the_cache_roots_tree_is_not_read(
    tmp_path: Path, kernel: tuple[str, ...]
) -> None:
    # the root's glob went through the link: the entry elsewhere was read and traced (its
    # TTGIR's parameter names printed), where a linked file of an entry was refused by name
    root, elsewhere = _cache_with_a_linked_entry(tmp_path)
    ran = shmem("trace", str(root), *kernel, "--list-params")
    refused(
        ran,
        "LINKED: error: LINKED is a link to a folder outside the cache root's source tree",
        "copy the entry into the root",
    )
    assert not ran.opened(elsewhere)
    assert "n_cols" not in ran.text  # a parameter of the entry linked to


@needs_nvdisasm
def test_a_linked_entry_does_not_hide_the_roots_own_entries(tmp_path: Path) -> None:
    root, elsewhere = _cache_with_a_linked_entry(tmp_path)
    shutil.copytree(SOFTMAX, root / "OWN")
    ran = shmem("trace", str(root), "-k", "softmax_rows", "--list-params")
    assert ran.code == 0, ran.text[-2000:]
    assert "n_cols" in ran.text
    assert not ran.opened(elsewhere)
    quiet(ran)


@needs_nvdisasm
def test_a_metadata_file_linked_outside_the_tree_is_not_read_for_its_name(tmp_path: Path) -> None:
    # with --kernel the root's metadata files were each read for their names before the
    # entry's own check of links refused the one linked outside
    root, elsewhere = _cache_with_a_linked_entry(tmp_path)
    (root / "LINKED").unlink()
    own = root / "OWN"
    shutil.copytree(SOFTMAX, own)
    (own / "softmax_rows.json").unlink()
    (own / "softmax_rows.json").symlink_to(elsewhere / "softmax_rows.json")
    ran = shmem("trace", str(root), "-k", "softmax_rows", "--list-params")
    refused(ran, "softmax_rows.json is a link to a file outside the entry's source tree")
    assert not ran.opened(elsewhere)
