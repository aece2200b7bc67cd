"""A Triton cache root at `shmem trace`'s front door: `--list-params` of a root of several
entries, `--kernel HASH` the start of several entries' hashes, and `--params` (a whole
parameter block, which Triton's launcher never passes).

The root is tests/data/triton/cache (the project's own kernels, tests/data/triton/kernels.py):
eight entries, whose folders are listed here as the directory holds them. Nothing here
disassembles, so no nvdisasm is needed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import shmem_cli
from shmem_cli.cli import main
from shmem_cli.plumbing.errors import ShmemError

from .conftest import TEST_DATA, needs_nvdisasm

ROOT = TEST_DATA / "triton" / "cache"
# the folders of ROOT, by name: what each holds is its <name>.json's "name"
FOLDERS = {
    "4SGPYMGJCKR2SIRCQ6L7K3M4GQ5ESPIW45W5I2LMJFJ2WNCHLKEA": "softmax_rows",
    "BNA37UX6NG47NQSUZID23JEHSIPE3YFLJEPGHWSGJUGSKGQ6TXBA": "matmul_tiles",
    "DEKKSS6LMVZRLUWHJITG765ALDXAATTMELW7NBX6MBSYHAQKZNMA": "transpose_tiles",
    "TCDPDDNZSIWZAONSNOODKEOJIIFWJ2PWIFIDR7QFFOJ7WCNXRQVQ": "softmax_rows",
    "TUD3YT4TI7T2GCR4TH6UHYMQJDEAY6OQ2ADNCRGWPWSESF3PV2ZA": "matmul_tiles",
    "UIAVWYKFMI46K2QIXDERSSIUTU46SKZUSQ6O7N3QILUNPZ6GU44A": "matmul_tiles",
    "UNND7ZFZ6IM7VTOWQMPSIPKXBOEP66KOZBNPGIZHUPBJYROL7JOQ": "matmul_tiles",
    "X4VAI6OMODXA3RO6WVTGIYMV44E3ZWU2W4GIGNNKF47Y7O34TSCA": "layernorm_rows",
}


def _trace(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["trace", *args])
    return result.exit_code, result.output


def test_list_params_of_a_root_lists_every_entry_under_its_folder() -> None:
    code, out = _trace(str(ROOT), "--list-params")
    assert code == 0, out
    assert out.startswith("8 Triton cache entries (trace one by its folder, or with --kernel HASH")
    lines = out.splitlines()
    heads = [k for k, line in enumerate(lines) if line.startswith(str(ROOT) + "/")]
    assert [lines[k].split()[0].rsplit("/", 1)[1] for k in heads] == list(FOLDERS)
    for k in heads:  # each head names its entry's kernel, whose table follows
        folder = lines[k].split()[0].rsplit("/", 1)[1]
        assert lines[k].split()[1] == FOLDERS[folder]
        assert lines[k + 1] == FOLDERS[folder]
    # layernorm_rows(out_ptr, in_ptr, w_ptr, b_ptr, n_cols, eps, BLOCK: constexpr) of
    # kernels.py: four pointers, an int, a float, then Triton's two scratch pointers
    layernorm = lines[heads[-1] + 3 : heads[-1] + 11]
    assert [row.split()[1:3] for row in layernorm] == [
        ["out_ptr", "float*"],
        ["in_ptr", "float*"],
        ["w_ptr", "float*"],
        ["b_ptr", "float*"],
        ["n_cols", "int32_t"],
        ["eps", "float"],
        ["global_scratch", "void*"],
        ["profile_scratch", "void*"],
    ]


def test_list_params_of_a_name_with_several_entries_lists_each_in_json() -> None:
    code, out = _trace(str(ROOT), "--kernel", "matmul_tiles", "--list-params", "--format", "json")
    assert code == 0, out
    kernels = json.loads(out)["kernels"]
    matmuls = [str(ROOT / f) for f, name in FOLDERS.items() if name == "matmul_tiles"]
    assert [k["entry"] for k in kernels] == matmuls
    assert {k["name"] for k in kernels} == {"matmul_tiles"}
    # c_ptr, a_ptr, b_ptr, m, n, k and the two scratch pointers
    assert [len(k["params"]) for k in kernels] == [8, 8, 8, 8]
    one = json.loads(_trace(str(ROOT), "--kernel", "layer", "--list-params", "--format", "json")[1])
    assert "entry" not in one["kernels"][0]  # one entry: as for a cubin


def _two_entries_of_one_hash_start(tmp_path: Path) -> Path:
    """A root whose two entries' folders start alike, compiled by two Triton versions."""
    root = tmp_path / "cache"
    layernorm = ROOT / "X4VAI6OMODXA3RO6WVTGIYMV44E3ZWU2W4GIGNNKF47Y7O34TSCA"
    for folder, version in (("AB12CD", "3.9.0"), ("AB34EF", "3.6.0")):
        shutil.copytree(layernorm, root / folder)
        meta = root / folder / "layernorm_rows.json"
        data = json.loads(meta.read_text())
        data["triton_version"] = version
        meta.write_text(json.dumps(data))
    return root


def test_a_hash_start_of_several_entries_lists_them_and_exits_2(tmp_path: Path) -> None:
    code, out = _trace(str(ROOT), "--kernel", "T", "-g", "1")
    assert code == 2
    assert "--kernel 'T' is the start of 2 entry folders' names (their hashes)" in out
    listed = [line.split()[:2] for line in out.splitlines() if line.startswith("  ")]
    assert listed == [
        [str(ROOT / "TCDPDDNZSIWZAONSNOODKEOJIIFWJ2PWIFIDR7QFFOJ7WCNXRQVQ"), "softmax_rows"],
        [str(ROOT / "TUD3YT4TI7T2GCR4TH6UHYMQJDEAY6OQ2ADNCRGWPWSESF3PV2ZA"), "matmul_tiles"],
    ]
    root = _two_entries_of_one_hash_start(tmp_path)
    code, out = _trace(str(root), "--kernel", "AB", "--list-params")
    assert code == 2
    rows = [line for line in out.splitlines() if line.startswith("  ")]
    assert [row.split()[:2] for row in rows] == [
        [str(root / "AB12CD"), "layernorm_rows"],
        [str(root / "AB34EF"), "layernorm_rows"],
    ]
    assert rows[0].endswith("Triton 3.9.0") and rows[1].endswith("Triton 3.6.0")
    # more of the hash picks one
    code, out = _trace(str(root), "--kernel", "AB3", "--list-params")
    assert code == 0 and out.startswith("layernorm_rows\n")


def test_a_whole_parameter_block_is_refused_for_a_triton_entry(tmp_path: Path) -> None:
    block = tmp_path / "block.bin"
    block.write_bytes(bytes(40))  # softmax_rows' 40 bytes: still not how Triton launches
    entry = ROOT / "4SGPYMGJCKR2SIRCQ6L7K3M4GQ5ESPIW45W5I2LMJFJ2WNCHLKEA"
    code, out = _trace(str(entry), "--params", f"@{block}", "-g", "1")
    assert code == 2
    assert "leave out --params" in out
    assert "this kernel's: out_ptr, in_ptr, n_cols, row_stride" in out
    assert "--arg NAME=VALUE" in out and "Traceback" not in out
    with pytest.raises(ShmemError, match="leave out --params"):
        shmem_cli.trace(entry, grid=1, params=bytes(40))


@needs_nvdisasm
@pytest.mark.parametrize(
    ("kernel", "folder", "args"),
    [
        ("layernorm_rows", "X4VAI6OMODXA3RO6WVTGIYMV44E3ZWU2W4GIGNNKF47Y7O34TSCA", ["n_cols=768"]),
        (
            "DEKK",
            "DEKKSS6LMVZRLUWHJITG765ALDXAATTMELW7NBX6MBSYHAQKZNMA",
            ["n_rows=64", "n_cols=64"],
        ),
    ],
)
def test_a_root_traced_names_the_entry_its_kernel_picked(
    kernel: str, folder: str, args: list[str]
) -> None:
    """The report's file is the entry folder (a real cache holds dozens of compiles of one
    kernel), by the root as it was written: the text header's first word and JSON ``path``."""
    launch = ["--kernel", kernel, "--grid", "2", *(x for a in args for x in ("--arg", a))]
    code, out = _trace(str(ROOT), *launch, "--no-tables")
    assert code == 0, out
    assert out.split()[:2] == [str(ROOT / folder), FOLDERS[folder]]
    code, out = _trace(str(ROOT), *launch, "--format", "json")
    assert code == 0 and json.loads(out)["files"][0]["path"] == str(ROOT / folder)
    # the entry itself (its folder or a file of it) is named as it was given
    code, out = _trace(str(ROOT / folder / f"{FOLDERS[folder]}.json"), *launch[2:], "--no-tables")
    assert code == 0 and out.split()[0] == str(ROOT / folder / f"{FOLDERS[folder]}.json")


@pytest.mark.parametrize("folder", ["DEKKSS6LMVZRLUWHJITG765ALDXAATTMELW7NBX6MBSYHAQKZNMA"])
def test_a_compiles_hex_hash_or_a_lowercase_folder_start_picks_its_entry(folder: str) -> None:
    """``--kernel`` takes the hash Triton reports for a compile (``kernel.metadata.hash``, the
    .json's hex ``"hash"``), as a Python user has it, and the folder's start in lower case."""
    name = FOLDERS[folder]
    said = json.loads((ROOT / folder / f"{name}.json").read_text())["hash"]
    for start in (said[:10], said[:10].upper(), folder[:6].lower()):
        code, out = _trace(str(ROOT), "--kernel", start, "--list-params", "--format", "json")
        assert code == 0, (start, out)
        kernels = json.loads(out)["kernels"]
        assert [k["name"] for k in kernels] == [name], start
    code, out = _trace(str(ROOT), "--kernel", "0123abcd", "--list-params")
    assert code == 2 and "no Triton cache entry of a kernel named '0123abcd'" in out
