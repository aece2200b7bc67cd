"""Hostile inputs of the twenty-second adversarial round (docs/robustness.md, "What was found
and fixed", item 22).

A spec's ``kernel:`` values were checked one at a time, the first bad one stopping the check:
every one is said now, each at its place. YAML reads an unquoted ``0x...`` as a number, and the
check (and the trace) got its decimal: ``0x10000000000000000`` was "18446744073709551616 does
not fit" as an SH008 warning, and a double's ``0x3ff0000000000000`` (its bits: 1.0) reached the
trace as the number 4.6e18; the value goes on as written, and its refusal names the bound. A
``tensormap:`` value and the files a spec's values name (``@FILE``, a map's ``data=@FILE``,
``kernel.params``) were looked at only by the trace (an SH008 warning, nothing from
``analyze``); their form, the driver's limits and the files (there, regular, readable, at most
128 MiB, asked of the inode alone and only in the spec's own tree) are checked when the spec is
read. A map's ``data=@FILE`` was taken from the folder shmem ran in, not the spec's, and the
lint let it name a file outside the kernel's source tree (read as the tensor's data); a bare
``data=@`` was a zero-filled map. A tensor map's size of a leading zero (``box=032x8``) was
"internal error: ValueError" (``int(text, 0)``). A ``.npy`` header of a negative size was "its
header promises -16 bytes of data"; a Triton entry's ``tensordesc_meta`` record that Triton never
writes named the entry's folder alone: it is placed at the key in the ``.json``, with what to do.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from shmem_cli.cuda.launch import tensormap
from shmem_cli.spec.compile import load_spec

from .conftest import TEST_DATA, needs_nvdisasm
from .hostile import CUBIN, refused, shmem

SPEC = """name: t
block: [32]
kernel:
  source: no_such_kernel.cu
{kernel}
arrays:
  a: {{dtype: float, shape: [32]}}
accesses:
  - array: a
    index: [lane]
"""


def _spec(folder: Path, kernel: str, name: str = "k.yaml") -> Path:
    (folder / ".git").mkdir(exist_ok=True)  # the spec's source tree: this folder
    path = folder / name
    path.write_text(SPEC.format(kernel=kernel))
    return path


@pytest.mark.parametrize("command", ["lint", "analyze"])
def test_every_malformed_kernel_value_is_said_each_at_its_place(
    tmp_path: Path, command: str
) -> None:
    kernel = (
        "  args: {a: abc, b: 1e400, m: 'tensormap:dtype=f33,dims=64,box=64'}\n"
        "  const: {c: 'flaot:1'}\n"
        "  memory: {0x7f0000000000: 'int:1,x'}\n"
        "  params: '@nope.bin'"
    )
    _spec(tmp_path, kernel)
    ran = shmem(command, str(tmp_path / "k.yaml"), cwd=tmp_path)
    refused(
        ran,
        "k.yaml:5:13: error: kernel.args a: 'abc' is not a number",
        "k.yaml:5:21: error: kernel.args b: 1e400 is beyond the range of every float",
        "k.yaml:5:31: error: kernel.args m: tensor-map dtype 'f33' is not one of",
        "k.yaml:6:14: error: kernel.const c: unknown element type 'flaot'",
        "k.yaml:7:28: error: kernel.memory 0x7f0000000000 value 1: 'x' is not a number",
        "k.yaml:8:11: error: kernel.params: nope.bin: no such file",
    )


def test_an_unquoted_hexadecimal_value_is_said_as_written_with_its_bound(tmp_path: Path) -> None:
    _spec(tmp_path, "  args: {n: 0x10000000000000000, m: -0x1_0000_0000_0000_0000}")
    ran = shmem("lint", str(tmp_path / "k.yaml"), cwd=tmp_path)
    bound = "does not fit in 8 byte(s) (from -0x8000000000000000 to 0xffffffffffffffff"
    refused(
        ran,
        f"k.yaml:5:13: error: kernel.args n: 0x10000000000000000 {bound}",
        f"kernel.args m: -0x10000000000000000 {bound}",
    )


def test_an_unquoted_hexadecimal_value_reaches_the_trace_as_its_bits(tmp_path: Path) -> None:
    # a launch takes hexadecimal as raw bits: 1.0 for a double, where YAML's number 4.6e18
    # would be converted; quoted or not, the same value
    spec = load_spec(_spec(tmp_path, "  args: {alpha: 0x3ff0000000000000, n: 0x2a, k: 42}"))
    assert spec.kernel is not None
    assert dict(spec.kernel.args) == {"alpha": "0x3ff0000000000000", "n": "0x2a", "k": "42"}


def test_a_tensor_maps_sizes_are_decimal_and_its_data_names_a_file() -> None:
    # int('032', 0) raised ValueError: "internal error"
    got = tensormap.parse_spec("tensormap:dtype=f32,dims=064x64,box=032x8,strides=0256")
    assert (got.map.dims, got.map.box, got.map.strides) == ((64, 64), (32, 8), (256,))
    with pytest.raises(tensormap.TensorMapError, match="data= names a file"):
        tensormap.parse_spec("tensormap:dtype=f32,dims=64x64,box=32x8,data=@")  # was zeros


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("'@nope.bin'", "kernel.args p: nope.bin: no such file"),
        ("'@sub'", "kernel.args p: sub is a folder, not a regular file"),
        ("'@pipe'", "kernel.args p: pipe is a FIFO (named pipe), not a regular file"),
        ("'@big.bin'", "kernel.args p: big.bin holds 134,217,729 bytes; a launch's file"),
        ("'tensormap:dtype=f32,dims=64,box=64,data=@nope.bin'", "kernel.args p: nope.bin: no such"),
        (
            "'tensormap:dtype=f32,dims=64,box=300'",
            "kernel.args p: tensor-map box sizes must be between 1 and 256",
        ),
    ],
    ids=["missing", "folder", "fifo", "too-big", "map-data-missing", "map-box"],
)
def test_a_values_file_and_map_are_checked_when_the_spec_is_read(
    tmp_path: Path, value: str, said: str
) -> None:
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "pipe")
    with (tmp_path / "big.bin").open("wb") as fh:  # sparse: refused by its size, never read
        fh.truncate((128 << 20) + 1)
    _spec(tmp_path, f"  args: {{p: {value}}}")
    for command in ("analyze", "lint"):  # an SH008 warning of the trace before, exit 0
        refused(
            shmem(command, str(tmp_path / "k.yaml"), cwd=tmp_path), f"k.yaml:5:13: error: {said}"
        )


def test_a_maps_data_is_the_spec_folders_and_stays_in_the_source_tree(tmp_path: Path) -> None:
    home, away = tmp_path / "home", tmp_path / "away"
    home.mkdir()
    away.mkdir()
    (home / "a.bin").write_bytes(bytes(256))
    (away / "secret.bin").write_bytes(bytes(256))
    spec = load_spec(_spec(home, "  args: {p: 'tensormap:dtype=f32,dims=64,box=64,data=@a.bin'}"))
    assert spec.kernel is not None  # taken from the spec's folder, not the one shmem runs in
    assert dict(spec.kernel.args)["p"].endswith(f",data=@{home / 'a.bin'}")
    out = "  args: {p: 'tensormap:dtype=f32,dims=64,box=64,data=@../away/secret.bin'}"
    _spec(home, out, "out.yaml")
    # the spec refuses the file outside the tree at its value (round 23: the lint and
    # analyze alike), never reading it (the trace read it as the tensor's data)
    for command in ("lint", "analyze"):
        ran = shmem(command, str(home / "out.yaml"), cwd=home)
        refused(
            ran,
            "out.yaml:5:13: error: kernel.args p: ../away/secret.bin is outside the kernel's "
            f"source tree ({home})",
        )
        assert not ran.opened(away / "secret.bin")


def test_a_npy_header_of_a_negative_size_is_said_so() -> None:
    # NumPy's parser takes shape (-4,): "its header promises -16 bytes of data"
    from shmem_cli.plumbing.errors import ShmemError
    from shmem_cli.trace.kernel.buffers import npy_data

    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }"
    header += b" " * (-(10 + len(header) + 1) % 16) + b"\n"
    data = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(16)
    with pytest.raises(ShmemError, match=r"shape \(-4,\) has a negative size"):
        npy_data(data, "--memory 0x7f0000000000: neg.npy")


HOST = next((TEST_DATA / "triton" / "jit36" / "cache_abi7").glob("*/matmul_host_desc.json"))


@pytest.mark.parametrize(
    ("field", "value"), [("swizzle", -1), ("swizzle", None), ("elem_type", 99), ("block_size", 0)]
)
def test_a_descriptor_record_triton_never_writes_is_placed_in_its_json(
    tmp_path: Path, field: str, value: object
) -> None:
    # it named the entry's folder alone, and said nothing of what to do
    from shmem_cli.plumbing.errors import ShmemError
    from shmem_cli.trace.triton import descriptors
    from shmem_cli.trace.triton.cache import read_entry

    folder = tmp_path / "entry"
    shutil.copytree(HOST.parent, folder)
    meta_path = folder / HOST.name
    meta = json.loads(meta_path.read_text())
    meta["tensordesc_meta"][0][field] = value
    meta_path.write_text(json.dumps(meta, indent=1))
    got = read_entry(meta_path)
    own = list(got.params)
    first = next(k for k, p in enumerate(own) if p.is_desc)
    with pytest.raises(ShmemError) as err:
        descriptors.expand(got, own, first, "tensordesc:shape=128x128,strides=128x1")
    line = meta_path.read_text().splitlines().index(' "tensordesc_meta": [') + 1
    assert err.value.path == str(meta_path) and err.value.pos is not None
    assert (err.value.pos.line, err.value.pos.column) == (line, 2)
    assert err.value.message.startswith("unexpected metadata: a_desc: "), err.value.message
    assert "(remove the entry; Triton writes it anew)" in err.value.message


@needs_nvdisasm
def test_a_cubin_nvdisasm_refuses_is_said_with_what_to_do(tmp_path: Path) -> None:
    # shmem's own reader takes a section-name table of a type no linker writes; nvdisasm
    # calls the table corrupted: its message alone said nothing of what to do
    data = bytearray(CUBIN.read_bytes())
    shoff = int.from_bytes(data[0x28:0x30], "little")
    shstrndx = int.from_bytes(data[0x3E:0x40], "little")
    data[shoff + shstrndx * 64 + 4 : shoff + shstrndx * 64 + 8] = b"\xff" * 4  # sh_type
    bad = tmp_path / "bad.cubin"
    bad.write_bytes(bytes(data))
    refused(
        shmem("trace", str(bad), "-k", "trivial", "--block", "32"),
        "bad.cubin: error: nvdisasm failed (exit status 1):",
        "nvdisasm cannot read this cubin: it is damaged, or for an SM this nvdisasm does not "
        "know; rebuild it (nvcc -cubin -lineinfo -arch=sm_XX)",
    )


CACHE = TEST_DATA / "triton" / "cache"
MATMUL = CACHE / "UIAVWYKFMI46K2QIXDERSSIUTU46SKZUSQ6O7N3QILUNPZ6GU44A"
SOFTMAX = CACHE / "4SGPYMGJCKR2SIRCQ6L7K3M4GQ5ESPIW45W5I2LMJFJ2WNCHLKEA"


@pytest.mark.parametrize(
    ("copied", "text", "said"),
    [
        (
            "softmax_rows.cubin",
            None,
            "matmul_tiles.cubin: error: the entry's matmul_tiles.cubin holds softmax_rows, not "
            "matmul_tiles, the kernel its .json names: the entry's files come from different "
            "compiles; give an entry folder as Triton wrote it",
        ),
        (
            "softmax_rows.ttgir",
            None,
            "matmul_tiles.ttgir: error: the TTGIR has no function @matmul_tiles, the kernel the "
            "entry's .json names (it has @softmax_rows: the entry's files come from different "
            "compiles); give an entry folder as Triton wrote it",
        ),
        (None, "", "(it has no function at all: not a TTGIR Triton wrote)"),
    ],
    ids=["cubin-of-another", "ttgir-of-another", "ttgir-empty"],
)
def test_an_entry_of_files_from_different_compiles_is_said_so(
    tmp_path: Path, copied: str | None, text: str | None, said: str
) -> None:
    # the cubin's was "no kernel matches --kernel 'matmul_tiles'" and said to use -k (the
    # entry's .json names the kernel, the user gave no --kernel); the TTGIR's said only that
    # it has no function @matmul_tiles
    folder = tmp_path / "entry"
    shutil.copytree(MATMUL, folder)
    if copied is not None:
        shutil.copy(SOFTMAX / copied, folder / copied.replace("softmax_rows", "matmul_tiles"))
    if text is not None:
        (folder / "matmul_tiles.ttgir").write_text(text)
    refused(shmem("trace", str(folder), "--grid", "1"), said)


def test_a_json_file_with_a_byte_order_mark_is_said_in_words(tmp_path: Path) -> None:
    # Python's "Unexpected UTF-8 BOM (decode using utf-8-sig)": advice to a programmer
    spec = _spec(tmp_path, "").read_text().replace("kernel:\n  source: no_such_kernel.cu\n", "")
    (tmp_path / "k.yaml").write_text(spec)
    baseline = tmp_path / "base.json"
    baseline.write_bytes(b'\xef\xbb\xbf{"schema_version": 1, "findings": []}')
    folder = tmp_path / "entry"
    shutil.copytree(MATMUL, folder)
    meta = folder / "matmul_tiles.json"
    meta.write_bytes(b"\xef\xbb\xbf" + meta.read_bytes())
    said = "it starts with a UTF-8 byte-order mark, which JSON does not allow (save it as UTF-8"
    ran = shmem("lint", str(tmp_path / "k.yaml"), "--baseline", str(baseline))
    refused(ran, f"base.json:1:1: error: baseline is not valid JSON: {said}")
    refused(shmem("trace", str(folder), "--grid", "1"), f"not Triton metadata (not JSON: {said}")
    assert "utf-8-sig" not in ran.text


def test_a_launch_integer_with_a_leading_zero_is_read_as_every_launch_value_reads_it() -> None:
    # int(text, 0) refused '010': a --memory address printed with a width (0000139637976727552)
    # was "ADDR must be a device address", and a Triton entry's divisibility check let --arg
    # K=017 through (skipped as "not an integer", then read as 17 by the launch)
    from shmem_cli.cuda.launch.values import integer
    from shmem_cli.trace.kernel.param_block import _address

    assert [integer(t) for t in ("010", "-007", "0x10", " 42 ", "1_0", "0b1", "")] == [
        10,
        -7,
        16,
        42,
        None,
        None,
        None,
    ]
    assert _address("0000139637976727552") == 0x7F0000000000
    assert _address("0x7f_0000_0000_00") == 0x7F0000000000


@needs_nvdisasm
def test_a_triton_integer_with_a_leading_zero_is_held_to_the_entrys_divisibility() -> None:
    from click.testing import CliRunner

    from shmem_cli.cli import main

    cache = TEST_DATA / "triton" / "sweep16" / "cache"
    args = ["trace", str(cache), "--kernel", "ws_tile", "--no-tables", "--grid", "1"]
    got = CliRunner().invoke(main, [*args, "--arg", "K=0250"])
    assert got.exit_code == 2, got.output
    said = " ".join(got.output.split())
    assert "--arg K=0250: this entry was compiled for K a multiple of 16" in said


@pytest.mark.parametrize("command", ["lint", "analyze"])
def test_a_table_of_more_values_than_a_launch_takes_is_refused_when_the_spec_is_read(
    tmp_path: Path, command: str
) -> None:
    # it was the trace's SH008 warning (exit 0), and analyze took the spec
    values = ",".join(["1"] * 65_537)
    _spec(tmp_path, f"  memory: {{0x7f0000000000: 'int:{values}'}}")
    refused(
        shmem(command, str(tmp_path / "k.yaml")),
        "k.yaml:5:28: error: kernel.memory 0x7f0000000000: more than 65,536 values; give a "
        "larger table as @FILE",
    )


@pytest.mark.parametrize(("key", "column"), [("''", 14), ("'+4'", 16), ("' '", 15)])
def test_an_argument_key_that_names_no_parameter_is_refused_at_it(
    tmp_path: Path, key: str, column: int
) -> None:
    # the trace's "kernel.args expects POSITION=VALUE or NAME=VALUE, got '=1'" (or "kernel.args
    # : no parameter of that name"), an SH008 warning at kernel:, exit 0
    _spec(tmp_path, f"  args: {{{key}: 1}}")
    refused(
        shmem("lint", str(tmp_path / "k.yaml")),
        f"k.yaml:5:{column}: error: kernel.args",
        "names no parameter: give its position (0, 1, ...) or its name",
    )


def test_more_memory_ranges_than_a_launch_takes_are_refused_when_the_spec_is_read(
    tmp_path: Path,
) -> None:
    # the trace's "1,025 device memory ranges are given (--memory); the most is 1024" was an
    # SH008 warning (exit 0) with nothing to do
    ranges = ", ".join(f"{0x7F0000000000 + 16 * i:#x}: 'int:1'" for i in range(1025))
    _spec(tmp_path, f"  memory: {{{ranges}}}")
    refused(
        shmem("analyze", str(tmp_path / "k.yaml")),
        "k.yaml:5:11: error: kernel.memory gives 1,025 ranges; the most is 1024: join "
        "neighbouring ranges into one @FILE each",
    )
