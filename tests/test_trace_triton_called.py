"""A Triton entry traced as its call was made: kernels.py's centred_rows, called with
col_stride=1 (compiled into the kernel) and a runtime bool CENTRE, compiled ahead of time by
Triton 3.3.1 and 3.4.0 (their TTGIR names no parameter) and 3.6.0, and its matmul_host_desc
through host-side TensorDescriptors by 3.4.0 (tests/data/triton/called/build.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shmem_cli.cli import main

from .conftest import TEST_DATA, needs_nvdisasm

DATA = TEST_DATA / "triton" / "called"
DEF = "out_ptr, in_ptr, n_cols, row_stride, col_stride, scale, CENTRE"
JIT36_HOST_DESC = "QGV6MNWLA7VW64PRN55XLRWRTFZIYDD2XKNN6WM5FY7PGUNOP2TQ"

pytestmark = needs_nvdisasm


def entry(version: str, name: str = "centred_rows") -> Path:
    (meta,) = (DATA / version).glob(f"*/{name}.json")
    return meta.parent


def trace(version: str, *args: str) -> Any:
    scalars = ("n_cols=1000", "row_stride=1024", "scale=0.5", *args)
    command = ["trace", str(entry(version)), "--grid", "2", "--no-tables"]
    return CliRunner().invoke(main, [*command, *(f"--arg={a}" for a in scalars)])


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.3.1", "3.4.0"])
def test_an_older_entry_is_named_by_the_arguments_its_call_had(version: str) -> None:
    # Triton 3.3 dropped col_stride (1 at the call) and wrote %arg0..%arg5: the call names them
    got = trace(version, "col_stride=1", "CENTRE=True")
    assert got.exit_code == 0, got.output
    assert "2 (n_cols)=1000, 3 (row_stride)=1024, 4 (scale)=0.5, 5 (CENTRE)=True" in got.output
    assert "col_stride" not in got.output
    # tl.sum's cross-warp exchange goes through shared memory only when CENTRE is true
    assert "\nload " in got.output and "\nstore " in got.output
    off = trace(version, "col_stride=1", "CENTRE=False")
    assert off.exit_code == 0, off.output
    assert "5 (CENTRE)=False" in off.output
    assert "no shared-memory instruction was executed" in off.output


def test_a_bool_parameter_takes_pythons_true_and_false() -> None:
    on = trace("3.6.0", "CENTRE=True")
    assert on.exit_code == 0, on.output
    assert "5 (CENTRE)=True" in on.output and "\nload " in on.output
    off = trace("3.6.0", "CENTRE=false")
    assert off.exit_code == 0, off.output
    assert "no shared-memory instruction was executed" in off.output


def test_an_older_entry_without_the_compiled_in_argument_says_what_to_give() -> None:
    got = trace("3.3.1", "CENTRE=True")
    assert got.exit_code == 2
    assert f"the kernel's Python def has 1 more ({DEF})" in got.output
    assert "--arg NAME=1" in got.output and "Traceback" not in got.output
    # a bool given as 1 is no sign of a compiled-in argument: nothing is guessed
    guessed = trace("3.3.1", "CENTRE=1")
    assert guessed.exit_code == 2 and "1 more" in guessed.output


def test_the_python_api_passes_a_bool_as_python_does() -> None:
    import shmem_cli

    args = {"n_cols": 1000, "row_stride": 1024, "scale": 0.5}
    on = shmem_cli.trace(entry("3.6.0"), grid=2, args={**args, "CENTRE": True})
    off = shmem_cli.trace(entry("3.6.0"), grid=2, args={**args, "CENTRE": False})
    assert on.totals["load"].requests > 0 and off.totals["load"].requests == 0


def test_an_older_host_descriptor_entry_is_named_from_its_def() -> None:
    """Triton 3.4's TTGIR writes %arg0..%arg15 for three descriptors (each a tensor map, its
    shape and strides) and k: the def's four names name them, the parts after their descriptor."""
    import shmem_cli

    listed = CliRunner().invoke(
        main, ["trace", str(entry("3.4.0", "matmul_host_desc")), "--list-params"]
    )
    names = [line.split()[1] for line in listed.output.splitlines()[2:-1]]
    parts = ["shape0", "shape1", "stride0", "stride1"]
    descs = [[d, *(f"{d}.{p}" for p in parts)] for d in ("a_desc", "b_desc", "c_desc")]
    assert names == [*descs[0], *descs[1], *descs[2], "k", "global_scratch"]
    tensor = "tensordesc:shape=128x128,strides=128x1"
    args = {"k": 128, "a_desc": tensor, "b_desc": tensor, "c_desc": tensor}
    old = shmem_cli.trace(entry("3.4.0", "matmul_host_desc"), grid=(2, 2), args=args)
    # the same kernel by Triton 3.6, whose counts the H200 gave (test_trace_triton_jit36.py)
    new = TEST_DATA / "triton" / "jit36" / "cache_abi7" / JIT36_HOST_DESC
    want = shmem_cli.trace(new, grid=(2, 2), args=args)
    assert {op: t for op, t in old.totals.items()} == {op: t for op, t in want.totals.items()}
    assert old.totals["wgmma"].wavefronts == 1024


def test_an_experimental_tma_descriptor_is_a_tensor_map_to_give() -> None:
    """Triton 3.3's create_2d_tma_descriptor: an i8 pointer {tt.nv_tma_desc = 1} in the TTGIR,
    128 bytes in the cubin. It is a CUtensorMap given as --arg tensormap:..., as Triton's driver
    encodes it (u16 for 2-byte elements, a 64-byte box row: 64B swizzle; 128 bytes: 128B)."""
    import shmem_cli

    folder = entry("3.3.1", "matmul_tma_desc")
    listed = CliRunner().invoke(main, ["trace", str(folder), "--list-params"])
    assert "0  a_desc          CUtensorMap    0x30   128" in listed.output
    bare = CliRunner().invoke(main, ["trace", str(folder), "-g", "2,2", "-a", "k=128"])
    assert bare.exit_code == 2 and "a_desc is a TMA descriptor the host encodes" in bare.output
    maps = {
        "a_desc": "tensormap:dtype=u16,dims=128x128,box=32x64,swizzle=64B,l2=128B",
        "b_desc": "tensormap:dtype=u16,dims=128x128,box=64x32,swizzle=128B,l2=128B",
        "c_desc": "tensormap:dtype=u16,dims=128x128,box=64x64,swizzle=128B,l2=128B",
    }
    got = shmem_cli.trace(folder, grid=(2, 2), args={"k": 128, **maps})
    # the same tiles through Triton 3.6's TensorDescriptor, as the H200 measured them
    tensor = "tensordesc:shape=128x128,strides=128x1"
    args = {"k": 128, "a_desc": tensor, "b_desc": tensor, "c_desc": tensor}
    want = shmem_cli.trace(TEST_DATA / "triton" / "jit36" / "cache_abi7" / JIT36_HOST_DESC,
                           grid=(2, 2), args=args)  # fmt: skip
    assert {op: t for op, t in got.totals.items()} == {op: t for op, t in want.totals.items()}


def test_an_older_entry_whose_def_is_out_of_reach_names_its_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the entry copied out of the repository and traced from elsewhere: its TTGIR names the
    # def's file (/work/wt/trisweep/tests/data/triton/kernels.py, where it was compiled), which
    # is not read outside the source tree; the error names that file and its folder
    folder = tmp_path / "cache" / entry("3.3.1").name
    shutil.copytree(entry("3.3.1"), folder)
    monkeypatch.chdir(tmp_path)
    got = CliRunner().invoke(main, ["trace", str(folder), "--grid", "2", "--arg", "n_cols=1000"])
    assert got.exit_code == 2
    said = " ".join(got.output.split())
    assert "whose file, /work/wt/trisweep/tests/data/triton/kernels.py as the TTGIR names" in said
    assert "is not there (compiled on another machine, or moved)" in said
    assert "the kernel's .py file (/work/wt/trisweep/tests/data/triton where it was" in said


def _moved_entry(tmp_path: Path, def_file: Path) -> Path:
    """3.3.1's centred_rows entry whose TTGIR names ``def_file`` as the kernel's file."""
    folder = tmp_path / "cache" / entry("3.3.1").name
    shutil.copytree(entry("3.3.1"), folder)
    ttgir = next(folder.glob("*.ttgir"))
    text = ttgir.read_text()
    ttgir.write_text(text.replace("/work/wt/trisweep/tests/data/triton/kernels.py", str(def_file)))
    return folder


def test_an_older_entrys_def_outside_the_tree_is_named_with_the_root_to_give(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the kernel's .py is where the TTGIR says, outside the entry's folder (no repository):
    # the error says it is there and which --source-root reads it, and that one does
    src = tmp_path / "src" / "kernels.py"
    src.parent.mkdir()
    shutil.copyfile(TEST_DATA / "triton" / "kernels.py", src)
    folder = _moved_entry(tmp_path, src)
    monkeypatch.chdir(tmp_path / "cache")
    args = ["trace", str(folder), "--grid", "2", "--arg", "n_cols=1000"]
    got = CliRunner().invoke(main, args)
    assert got.exit_code == 2
    said = " ".join(got.output.split())
    assert f"in {src}, outside the source tree" in said
    assert f"give --source-root {src.parent} (or a folder above it)" in said
    listed = CliRunner().invoke(main, ["trace", str(folder), "--list-params"])
    assert listed.exit_code == 0, listed.output
    said = " ".join(listed.output.split())  # the same reason under the argN listing
    assert " arg5 " in said and "note: this entry's TTGIR does not name the parameters" in said
    assert f"give --source-root {src.parent} (or a folder above it), or name the" in said
    named = CliRunner().invoke(main, ["trace", str(entry("3.6.0")), "--list-params"])
    assert named.exit_code == 0 and " CENTRE " in named.output and "note:" not in named.output
    call = ["--arg", "row_stride=1024", "--arg", "col_stride=1", "--arg", "scale=0.5"]
    call += ["--arg", "CENTRE=True", "--source-root", str(src.parent), "--no-tables"]
    got = CliRunner().invoke(main, [*args, *call])
    assert got.exit_code == 0, got.output
    assert "(n_cols)=1000" in got.output


def test_an_older_entrys_file_without_its_def_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "cache" / "kernels.py"  # found, read, and the def renamed since
    folder = _moved_entry(tmp_path, src)
    src.write_text((TEST_DATA / "triton" / "kernels.py").read_text().replace("centred_rows", "x"))
    monkeypatch.chdir(tmp_path / "cache")
    got = CliRunner().invoke(
        main, ["trace", str(folder), "--source-root", str(src.parent), "--arg", "n_cols=1000"]
    )
    assert got.exit_code == 2
    said = " ".join(got.output.split())
    assert (
        f"{src}, the file the TTGIR names as shmem found it, holds no def of centred_rows" in said
    )
