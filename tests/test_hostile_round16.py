"""Hostile inputs of the sixteenth adversarial round (docs/robustness.md, "What was found and
fixed", item 16): cubins whose zero-filled sections nvdisasm would make real, parameter
records no compiler writes, and static shared memory past the architecture's. Each ends with
a result or a located error (exit status 2) in bounded time and memory.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda import toolchain
from shmem_cli.cuda.launch.values import LaunchError
from shmem_cli.cuda.toolchain import ToolError
from shmem_cli.plumbing.bounded_read import read_bounded, wide_encoding
from shmem_cli.plumbing.errors import ShmemError, SourcePos
from shmem_cli.trace.kernel import binaries
from shmem_cli.trace.kernel.cubin import read_cubin
from shmem_cli.trace.kernel.launch import check_shared
from shmem_cli.trace.triton.metadata import key_position

from .conftest import TEST_DATA, needs_nvdisasm
from .hostile import CUBIN, refused, shmem
from .test_fatbin import _host_elf
from .test_hostile_mutations import _cubin, _param, _record
from .test_hostile_triton import entry

SHT_NOBITS = 8


def _sections(cubin: bytes) -> dict[str, int]:
    """The header offset of each section of ``cubin``, by name."""
    shoff = struct.unpack_from("<Q", cubin, 0x28)[0]
    shnum, shstrndx = struct.unpack_from("<HH", cubin, 0x3C)
    names_at = struct.unpack_from("<Q", cubin, shoff + shstrndx * 64 + 24)[0]
    out = {}
    for k in range(shnum):
        at = names_at + struct.unpack_from("<I", cubin, shoff + k * 64)[0]
        out[cubin[at : cubin.index(b"\0", at)].decode()] = shoff + k * 64
    return out


def _sized(cubin: bytes, section: str, size: int) -> bytes:
    """``cubin`` with the section ``section``'s size (sh_size) set to ``size``."""
    out = bytearray(cubin)
    struct.pack_into("<Q", out, _sections(cubin)[section] + 32, size)
    return bytes(out)


# --- zero-filled sections nvdisasm makes real ------------------------------------------------


def test_a_cubin_of_little_zero_filled_data_is_disassembled_as_it_is() -> None:
    assert toolchain.nobits_emptied(CUBIN) is None  # 1 KiB-odd shared sections: no copy


def test_zero_filled_sections_and_their_symbols_are_emptied_in_the_copy(tmp_path: Path) -> None:
    path = tmp_path / "global.cubin"
    path.write_bytes(_sized(CUBIN.read_bytes(), ".nv.shared.many1000", 1 << 30))
    original = path.read_bytes()
    emptied = toolchain.nobits_emptied(path)
    assert emptied is not None and len(emptied) == len(original)
    headers = _sections(original)
    nobits = [a for a in headers.values() if struct.unpack_from("<I", original, a + 4)[0] == 8]
    assert all(struct.unpack_from("<Q", emptied, at + 32)[0] == 0 for at in nobits)
    # only sizes changed: the NOBITS sections' and the st_size of each symbol in one
    symtab, symtab_size = struct.unpack_from("<QQ", original, headers[".symtab"] + 24)
    sizes = {at + 32 for at in nobits} | set(range(symtab + 16, symtab + symtab_size, 24))
    changed = {k - k % 8 for k in range(len(original)) if original[k] != emptied[k]}
    assert changed and changed <= sizes | {s - s % 8 for s in sizes}


@needs_nvdisasm
def test_the_listing_of_an_emptied_copy_is_the_cubins_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what makes the copy sound: nvdisasm lists the same SASS without the zero-filled bytes
    listing = toolchain.disassemble(CUBIN)
    monkeypatch.setattr(toolchain, "NOBITS_COPY", 0)
    assert toolchain.nobits_emptied(CUBIN) is not None
    assert toolchain.disassemble(CUBIN) == listing


@needs_nvdisasm
def test_a_gigabyte_of_zero_filled_data_is_traced(tmp_path: Path) -> None:
    # a __device__ array of 1 GiB (here another kernel's shared section of that size, which
    # nvdisasm holds the same way): nvdisasm made it real (1.1 GB) and, under the 768 MiB it
    # is given, failed with "Memory allocation failure" and no word of why
    path = tmp_path / "big.cubin"
    path.write_bytes(_sized(CUBIN.read_bytes(), ".nv.shared.many1000", 1 << 30))
    ran = shmem("trace", str(path), "-k", "trivial", "--block", "32", "--no-tables")
    assert ran.code == 0, ran.text[-2000:]
    assert "Memory allocation failure" not in ran.text
    assert ran.peak_mib < 1024


# --- static shared memory past the architecture's -----------------------------------------------


@needs_nvdisasm
def test_static_shared_memory_past_the_profile_is_blamed_on_the_kernel(tmp_path: Path) -> None:
    # a .nv.shared section of 4 GiB was "--dynamic-smem: 0 bytes ... give at most 0 bytes of
    # dynamic shared memory", after nvdisasm's "Memory allocation failure"
    path = tmp_path / "shared.cubin"
    path.write_bytes(_sized(CUBIN.read_bytes(), ".nv.shared._Z7trivialPi", 1 << 32))
    ran = shmem("trace", str(path), "-k", "trivial", "--block", "32")
    refused(
        ran,
        "shared.cubin: error: trivial has 4,294,966,272 bytes of static shared memory",
        "rebuild it with smaller __shared__ arrays",
    )
    assert "--dynamic-smem" not in ran.text


def test_static_shared_memory_within_the_profile_leaves_room_for_dynamic() -> None:
    (kernel,) = [k for k in read_cubin(CUBIN, use_tools=False).kernels if k.name == "trivial"]
    check_shared(kernel, 1024)
    with pytest.raises(LaunchError, match="--dynamic-smem: 1,000,000 bytes"):
        check_shared(kernel, 1_000_000)


# --- parameter records no compiler writes ---------------------------------------------------

KPARAM_INFO, PARAM_CBANK, CBANK_PARAM_SIZE = 0x17, 0x0A, 0x19


def _size(size: int) -> bytes:
    return struct.pack("<BBH", 3, CBANK_PARAM_SIZE, size)


@pytest.mark.parametrize(
    ("info", "said"),
    [
        # a parameter past the block: --arg wrote it where the kernel never reads
        (_param(0, 0, 8) + _param(1, 0xFFF0, 16) + _size(16), "parameter 1 ends at byte 0x10000"),
        (_param(0, 0, 8) + _size(0), "parameter 0 ends at byte 0x8, past the 0-byte block"),
        # two parameters at one position: --arg 0 set one of them
        (_param(0, 0, 8) + _param(0, 8, 8) + _size(16), "two parameters at position 0"),
        # a block at c[0x0][0xffff] of 65,535 bytes: past constant bank 0
        (
            _param(0, 0, 8) + _record(PARAM_CBANK, struct.pack("<IHH", 0, 0xFFFF, 0xFFFF)),
            "its parameter block ends at c[0x0][0x1fffe], past the bank's 64 KiB",
        ),
    ],
)
def test_parameter_records_no_compiler_writes_are_refused(
    tmp_path: Path, info: bytes, said: str
) -> None:
    path = tmp_path / "params.cubin"
    path.write_bytes(_cubin([b"k"], info))
    with pytest.raises(ShmemError) as err:
        read_cubin(path, use_tools=False)
    assert err.value.message.startswith(f"not a valid cubin: {said}")
    assert err.value.message.endswith("; rebuild it")
    assert err.value.path == str(path)


def test_the_parameter_records_of_the_projects_cubins_are_read() -> None:
    # every cubin of tests/data (412: nvcc 12 and 13, Triton, -G builds) reads as before
    for path in sorted(TEST_DATA.rglob("*.cubin")):
        read_cubin(path, use_tools=False)


def test_parameters_at_their_offsets_are_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.cubin"
    path.write_bytes(_cubin([b"k"], _param(1, 8, 4) + _param(0, 0, 8) + _size(12)))
    (kernel,) = read_cubin(path, use_tools=False).kernels
    assert [(p.ordinal, p.offset, p.size) for p in kernel.params] == [(0, 0, 8), (1, 8, 4)]
    assert kernel.param_bytes == 12


# --- Triton metadata placed at its field ------------------------------------------------------


def test_a_top_level_key_is_found_where_json_reads_it() -> None:
    text = '{"a": {"num_warps": 1}, "s": "\\"num_warps\\": 2",\n  "num_warps": 3, "num_warps" : 4}'
    # nested, inside a string, then twice at the top: JSON keeps the last
    column = text.rindex('"num_warps"') - text.index("\n")
    assert key_position(text, "num_warps") == SourcePos(2, column)
    assert key_position(text, "missing") is None
    assert key_position("[1, 2]", "num_warps") is None


@pytest.mark.parametrize(
    ("changes", "key", "said"),
    [
        ({"num_warps": 64}, "num_warps", "'num_warps' is 64; a launch takes 1 to 32"),
        ({"cluster_dims": [4, 4, 4]}, "cluster_dims", "is a cluster of 64 blocks"),
        ({"name": 7}, "name", "'name' is an int (7), not a kernel's name"),
        (  # the target's warp size, where the entry has none of its own
            {"warp_size": ..., "target": {"backend": "cuda", "arch": 90, "warp_size": 64}},
            "target",
            "'warp_size' is 64; a launch takes 32",
        ),
    ],
)
def test_a_metadata_field_is_refused_at_its_place(
    tmp_path: Path, changes: dict[str, object], key: str, said: str
) -> None:
    # "unexpected metadata: ..." named the .json alone: no line and column
    folder = entry(tmp_path, **changes)
    text = (folder / "matmul_tiles.json").read_text()
    column = text.rindex(f'"{key}"') + 1  # one line, as Triton writes it
    ran = shmem("trace", str(folder), "--grid", "1")
    refused(ran, f"matmul_tiles.json:1:{column}: error: unexpected metadata: ", said)


# --- text files written as UTF-16 ------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_text_is_refused_at_its_start(tmp_path: Path, encoding: str) -> None:
    path = tmp_path / "text.csv"
    path.write_bytes('"Kernel Name","k"\n'.encode(encoding))
    with pytest.raises(ShmemError) as err:
        read_bounded(path, 1 << 20, text=True)
    assert (err.value.message, err.value.pos) == (
        "file is UTF-16 encoded; save it as UTF-8 text",
        SourcePos(1, 1),
    )
    assert read_bounded(path, 1 << 20) == path.read_bytes()  # bytes, not text: read


@pytest.mark.parametrize("text", ["", "a", "ab\n", "\ufeffab", "a\u00e9b\n", "k,1\n2,3\n"])
def test_utf8_text_is_not_taken_for_utf16(text: str) -> None:
    assert wide_encoding(text.encode("utf-8")) is None


@needs_nvdisasm
def test_a_utf16_nsight_export_is_refused_in_words(tmp_path: Path) -> None:
    # Windows PowerShell's `ncu ... --csv > out.csv` writes UTF-16: it was "no Nsight Compute
    # source table here", as if the export were of another page
    triton = TEST_DATA / "triton"
    path = tmp_path / "transpose.csv"
    path.write_bytes((triton / "ncu" / "transpose.csv").read_text().encode("utf-16"))
    entry_folder = triton / "cache" / "DEKKSS6LMVZRLUWHJITG765ALDXAATTMELW7NBX6MBSYHAQKZNMA"
    ran = shmem(
        "trace", str(entry_folder), "--grid", "2,2", "--arg", "n_rows=128", "--arg",
        "n_cols=128", "--no-tables", "--compare", str(path),
    )  # fmt: skip
    refused(ran, "transpose.csv:1:1: error: file is UTF-16 encoded; save it as UTF-8 text")


def test_a_utf16_triton_metadata_file_is_refused_in_words(tmp_path: Path) -> None:
    folder = entry(tmp_path)
    meta = folder / "matmul_tiles.json"
    meta.write_bytes(meta.read_text().encode("utf-16"))
    ran = shmem("trace", str(folder), "--grid", "1")
    refused(ran, "matmul_tiles.json:1:1: error: file is UTF-16 encoded; save it as UTF-8 text")


# --- an executable without a cubin ------------------------------------------------------------


def test_an_executable_of_ptx_only_says_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # nvcc -gencode arch=compute_90,code=compute_90: "holds no cubin (cuobjdump -lelf lists
    # none)", with no word of why or what to do
    host = tmp_path / "app"
    host.write_bytes(_host_elf(b""))
    monkeypatch.setattr(binaries, "embedded_cubins", lambda *_a, **_k: [])
    with pytest.raises(ToolError) as err:
        binaries.extract_cubins(host, "sm_90", tmp_path, cuobjdump="cuobjdump")
    assert "a program built for PTX only (-arch=compute_XX)" in str(err.value)
    assert str(err.value).endswith("build it with -arch=sm_90, or trace the .cu")


# --- a Triton entry without its cubin ---------------------------------------------------------


def test_an_entry_folder_without_its_cubin_says_so(tmp_path: Path) -> None:
    # the folder was "a folder, and no Triton cache entry is in it (...)", where an entry
    # without its .ttgir said which file was missing
    folder = entry(tmp_path)
    (folder / "matmul_tiles.cubin").unlink()
    said = "matmul_tiles.json: error: the entry has no matmul_tiles.cubin beside its metadata"
    refused(shmem("trace", str(folder), "--grid", "1"), said, "copy the whole entry folder")
    # and in a cache root, asked for by name
    refused(shmem("trace", str(tmp_path), "-k", "matmul_tiles", "--grid", "1"), said)


def test_a_folder_of_other_json_is_no_entry(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    ran = shmem("trace", str(tmp_path), "--grid", "1")
    refused(ran, "error: a folder, and no Triton cache entry is in it")


@pytest.mark.parametrize(
    ("name", "data", "said"),
    [
        ("k.ptx", b"//\n.version 8.8\n.target sm_90\n", "PTX, which ptxas compiles (ptxas -arch"),
        ("k.fatbin", b"\x50\xed\x55\xba\x01\x00\x10\x00", "cuobjdump -xelf all k.fatbin"),
        ("libk.a", b"!<arch>\n", "an archive (ar x it, and trace the object file"),
        ("k.txt", b"hello", "shared library with embedded cubins"),
    ],
)
def test_a_toolchain_file_shmem_does_not_read_says_what_to_make_of_it(
    tmp_path: Path, name: str, data: bytes, said: str
) -> None:
    # each was "neither CUDA source (.cu) nor a cubin nor an executable ...", no way on
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ToolError, match=re.escape(said)):
        binaries.kernel_input_kind(path)


# --- an ABI byte that does not match the flags ---------------------------------------------


@pytest.mark.parametrize(
    ("cubin", "abi", "said"),
    [
        ("abi8_ptxas13.0_sm_90.cubin", 7, "names sm_4 (e_flags 0x6005a04 read by the layout of "),
        ("abi7_ptxas12.4_sm_90.cubin", 8, "names sm_5 (e_flags 0x5a055a read by the layout of "),
    ],
)
def test_a_cubin_whose_abi_byte_lies_is_refused(
    tmp_path: Path, cubin: str, abi: int, said: str
) -> None:
    # an ABI 8 cubin marked 7 was read as sm_4 (its flag bits): traced with sm_90's rules and
    # a note, its reserved shared memory not taken off (ABI 7 marked 8: sm_5, 1,280 B static
    # where the kernel has 256)
    data = bytearray((TEST_DATA / "cubin_abi" / cubin).read_bytes())
    data[8] = abi
    path = tmp_path / "lying.cubin"
    path.write_bytes(bytes(data))
    with pytest.raises(ShmemError) as err:
        read_cubin(path, use_tools=False)
    assert err.value.message.startswith(f"not a valid cubin: its ELF header {said}")
    assert err.value.path == str(path)


def test_the_projects_cubins_name_the_sm_they_are_for() -> None:
    for path in sorted((TEST_DATA / "cubin_abi").glob("*.cubin")):
        assert read_cubin(path, use_tools=False).arch in ("sm_80", "sm_90", "sm_100"), path


# --- a spec's kernel argument said at its key --------------------------------------------------


@pytest.mark.slow
@needs_nvdisasm
@pytest.mark.parametrize(
    ("given", "key", "said"),
    [
        ("args: {nosuch: 1}", "nosuch", "kernel.args nosuch: no parameter of that name"),
        ("args: {0: 1, 2: 3.5}", "2", "'3.5' is not an integer"),  # kernel.args 2 (weights)
        ("args: {weights: 3.5}", "weights", "kernel.args "),  # said as 2 (weights)
        ("const: {table: 1}", "table", "kernel.const table: the kernel's cubin has no"),
    ],
)
def test_a_kernel_argument_the_trace_refuses_is_placed_at_its_key(
    tmp_path: Path, given: str, key: str, said: str
) -> None:
    # "kernel 'row_scale' was not traced ..." was placed at kernel: whatever it named
    compiled = TEST_DATA / "compiled_specs"
    (tmp_path / "kernels").mkdir()
    cubin = "row_scale.sm_90.cubin"
    (tmp_path / "kernels" / cubin).write_bytes((compiled / "kernels" / cubin).read_bytes())
    text = (compiled / "row_scale_v1.yaml").read_text()
    text = text.replace("  name: row_scale\n", f"  name: row_scale\n  {given}\n")
    spec = tmp_path / "k.yaml"
    spec.write_text(text)
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith(f"  {given}"))
    column = text.splitlines()[line - 1].index(f"{key}:") + 1
    ran = shmem("lint", str(spec))
    assert f"k.yaml:{line}:{column}: warning: kernel 'row_scale' was not traced" in ran.text
    assert said in " ".join(ran.text.split()) and "Traceback" not in ran.text


def test_a_target_the_cubin_is_not_for_is_placed_at_it(tmp_path: Path) -> None:
    # "the metadata says sm_999 and the cubin is for sm_90a" named the entry's folder alone
    folder = entry(tmp_path, target={"backend": "cuda", "arch": 999, "warp_size": 32})
    text = (folder / "matmul_tiles.json").read_text()
    column = text.index('"target"') + 1
    ran = shmem("trace", str(folder), "--grid", "1")
    refused(
        ran,
        f"matmul_tiles.json:1:{column}: error: the metadata says sm_999 and the cubin is for",
        "give an entry folder as Triton wrote it",
    )


# --- an exception shmem does not expect ------------------------------------------------------


def test_an_exception_shmem_does_not_expect_is_one_line_and_status_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a bug a hostile input reaches printed a traceback and exited 1, the status of findings;
    # the tests set SHMEM_TRACEBACK (conftest) so that they still see one whole
    from click.testing import CliRunner

    from shmem_cli.cli import main
    from shmem_cli.spec import source

    def fails(*_args: object, **_kwargs: object) -> str:
        raise ValueError("a check shmem lacks")

    monkeypatch.setattr(source, "decode_text", fails)
    spec = tmp_path / "s.yaml"
    spec.write_text("name: x\n")
    monkeypatch.delenv("SHMEM_TRACEBACK")
    result = CliRunner().invoke(main, ["analyze", str(spec)])
    assert (result.exit_code, type(result.exception)) == (2, SystemExit)
    # the spec's own error since round 19 (the other specs of a run are analyzed)
    assert "s.yaml: error: internal error: ValueError: a check shmem lacks; a bug in shmem" in (
        result.output
    )
    assert "Traceback" not in result.output
    monkeypatch.setenv("SHMEM_TRACEBACK", "1")
    result = CliRunner().invoke(main, ["analyze", str(spec)])
    assert isinstance(result.exception, ValueError)


# --- a kernel whose symbol is in no code ---------------------------------------------------


@pytest.mark.parametrize(
    ("section", "said"),
    [
        (0, "kernel _Z7trivialPi is in section 0, which holds no code"),
        (2, "kernel _Z7trivialPi is in section 2 (.strtab), which holds no code"),
        (0xFFFF, "kernel _Z7trivialPi is in section 65535, which holds no code"),
        (".nv.shared._Z7trivialPi", "(.nv.shared._Z7trivialPi), which holds no code"),
    ],
)
def test_a_kernel_in_a_section_of_no_code_is_refused(
    tmp_path: Path, section: int | str, said: str
) -> None:
    # traced from where nvdisasm placed it, with "the cubin holds no line table" said wrongly
    data = bytearray(CUBIN.read_bytes())
    headers = _sections(bytes(data))
    index = section if isinstance(section, int) else list(headers).index(section)
    symtab, size = struct.unpack_from("<QQ", data, headers[".symtab"] + 24)
    strtab = struct.unpack_from("<Q", data, headers[".strtab"] + 24)[0]
    for at in range(symtab, symtab + size, 24):
        name = struct.unpack_from("<I", data, at)[0] + strtab
        if data[name : data.index(b"\0", name)] == b"_Z7trivialPi":
            struct.pack_into("<H", data, at + 6, index)  # st_shndx
    path = tmp_path / "moved.cubin"
    path.write_bytes(bytes(data))
    with pytest.raises(ShmemError) as err:
        read_cubin(path, use_tools=False)
    assert said in err.value.message and err.value.message.endswith(": rebuild it")


# --- a TMA box larger than shared memory ------------------------------------------------------

TMA_RANKS = (
    "tensormap:dtype=u32,dims=1024,box=256",
    "tensormap:dtype=u32,dims=64x64,strides=256,box=32x8",
    "tensormap:dtype=u32,dims=32x8x4,strides=128x1024,box=32x4x4",
)


@needs_nvdisasm
def test_a_tma_box_larger_than_shared_memory_is_refused_before_its_indices_are_made() -> None:
    # a 5-D box of 32^5 words (128 MiB: a map the driver takes) had its element indices made
    # (2.2 GB, 6 s) before the copy was found to run past the block's 6 KiB of shared memory
    big = "tensormap:dtype=u32,dims=32x32x32x32x32,strides=128x4096x131072x4194304,box=" + "x".join(
        ["32"] * 5
    )
    cubin = TEST_DATA / "trace" / "hopper" / "tma_probe.sm_90a.cubin"
    args = [f"--arg={k}={m}" for k, m in enumerate((*TMA_RANKS, big))]
    ran = shmem("trace", str(cubin), "-k", "tma_ranks", "--block", "128", *args)
    refused(
        ran,
        "tma_probe.cu:117:1: error: a TMA box of 134,217,728 bytes is larger than the block's "
        "shared memory (0x1808 bytes): give the tensor map a smaller box",
    )
    assert ran.peak_mib < 300, ran.peak_mib


@pytest.mark.parametrize(
    ("given", "want"),
    [("8M", 8 << 20), ("8MiB", 8 << 20), ("48k", 48 << 10), ("1G", 1 << 30), ("4096", 4096)],
)
def test_a_byte_count_takes_a_unit_of_1024s(given: str, want: int) -> None:
    from shmem_cli.commands.trace_sizes import ByteCount

    assert ByteCount(1, 1 << 32).convert(given, None, None) == want


@pytest.mark.parametrize("given", ["1.5M", "8 MB of it", "-5", "0x100", "8T"])
def test_a_byte_count_that_is_not_one_says_what_to_give(given: str) -> None:
    from shmem_cli.commands.trace_sizes import ByteCount

    with pytest.raises(click.BadParameter, match=r"not a byte count: give a number of bytes"):
        ByteCount(1, 1 << 32).convert(given, None, None)


def test_a_byte_count_past_its_bound_is_refused_without_being_made() -> None:
    from shmem_cli.commands.trace_sizes import ByteCount

    for given in ("5G", "9" * 5000):
        with pytest.raises(click.BadParameter, match=r"is not in the range 1 to 4,294,967,296"):
            ByteCount(1, 1 << 32).convert(given, None, None)


@pytest.mark.parametrize(
    ("names", "where", "said"),
    [
        ("params: {threadIdx: 3}\n", "4:10", "param 'threadIdx' shadows a built-in name"),
        ("params: {blockDim: 3}\n", "4:10", "param 'blockDim' shadows a built-in name"),
        ("", "6:47", "loop variable 'threadIdx' shadows a built-in name or param"),
    ],
)
def test_a_param_or_loop_variable_named_as_a_built_in_is_refused(
    tmp_path: Path, names: str, where: str, said: str
) -> None:
    """``threadIdx`` alone would read as the param where ``threadIdx.x`` reads the thread's
    index: the bases of the built-ins are names a spec may not take."""
    loop = "{threadIdx: 0..1}" if not names else "{i: 0..1}"
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "arrays:\n  a: {dtype: float32, shape: [64]}\nblock: [32]\n"
        + (names or "params: {n: 1}\n")
        + f"accesses:\n  - {{array: a, index: ['threadIdx.x'], loop: {loop}}}\n"
    )
    got = CliRunner().invoke(main, ["analyze", str(spec)])
    assert got.exit_code == 2
    assert f"{spec}:{where}: error: {said}: rename it" in got.output
