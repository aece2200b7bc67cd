"""Hostile launches of ``shmem trace`` (issue 28): sizes, numbers and names on the command
line, buffer files, tensor maps and the total of global memory, a spec's ``kernel.grid``.

Every case runs as its own process (tests/hostile.py): exit 2 in seconds with a message
naming the input, no traceback, less than 1 GiB at the peak; the legal but large launches
(255 zero-filled buffers, a 4 GiB tensor map) run, with their memory made real only where
the kernel writes.
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.cuda.launch.values import check_dims, parse_dims, value_bytes
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator.global_memory import GlobalMemory
from shmem_cli.trace.emulator.trace_error import TraceError
from shmem_cli.trace.kernel.buffers import npy_data, read_buffer

from .conftest import HANG_S, needs_nvdisasm
from .hostile import CUBIN, PEAK_LIMIT_MIB, refused, shmem

TRIVIAL = ("trace", str(CUBIN), "-k", "trivial", "-b", "32", "--no-tables")


# --- sizes and numbers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("3\u00b2", "'3\u00b2'"),  # a superscript two: str.isdigit says yes, int says no
        ("\u0663\u0662", "ASCII digits"),  # Arabic-Indic 32: int() would take it
        ("9" * 5000, "'99999"),  # past Python's 4,300-digit conversion limit
        ("", "got ''"),  # not one thread
        ("1,2,3,4", "X[,Y[,Z]]"),
        ("0", "at least 1"),
    ],
)
def test_block_and_grid_texts(text: str, fragment: str) -> None:
    with pytest.raises(ShmemError) as err:
        parse_dims(text, "--block", limit=1024)
    assert fragment in err.value.message
    assert len(err.value.message) < 200


@pytest.mark.parametrize(
    ("text", "dims"),
    [("(64,)", (64, 1, 1)), ("(8, 8)", (8, 8, 1)), ("64,", (64, 1, 1)), ("[4, 2, 2]", (4, 2, 2))],
)
def test_a_grid_written_as_a_triton_launch_writes_it(text: str, dims: tuple[int, ...]) -> None:
    """``grid = (triton.cdiv(n, BLOCK),)`` copied from the launch is the grid it says."""
    assert parse_dims(text, "--grid", limit=1 << 31) == dims


@pytest.mark.parametrize("text", ["()", "(64,,)", "((8, 8))", "(8, 8", ",64"])
def test_a_tuple_of_no_sizes_or_a_broken_one_is_refused(text: str) -> None:
    with pytest.raises(ShmemError, match="X\\[,Y\\[,Z\\]\\]"):
        parse_dims(text, "--grid", limit=1 << 31)


def test_one_check_for_every_block_and_grid() -> None:
    with pytest.raises(ShmemError, match="is 1,099,511,627,776 in all; the most is 65,536"):
        check_dims((1 << 40, 1, 1), "--grid", limit=1 << 16)
    with pytest.raises(ShmemError, match=r"\(huge\)"):
        check_dims((10**5000, 1, 1), "--grid", limit=1 << 16)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("9" * 5000, "too long to be a number"),
        ("\u0663", "is not a number"),
        ("1e309", "does not fit in a 4-byte float"),
        ("0x" + "f" * 40, "does not fit in 4 byte(s)"),
    ],
)
def test_argument_numbers(text: str, fragment: str) -> None:
    with pytest.raises(ShmemError) as err:
        value_bytes(text, 4, "--arg 0")
    assert fragment in err.value.message
    assert len(err.value.message) < 200


@needs_nvdisasm
@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        # in `make test` a block and an argument; the other spellings (a run of shmem each,
        # their parsers tested without one above) in the slow suite
        (("-b", "3\u00b2"), ("--block expects",)),
        pytest.param(("-b", ""), ("--block expects", "got ''"), marks=pytest.mark.slow),
        pytest.param(("-b", "32", "-g", "9" * 5000), ("--grid expects",), marks=pytest.mark.slow),
        (("-b", "32", "-a", "0=" + "9" * 5000), ("too long to be a number",)),
        pytest.param(
            ("-b", "32", "-a", "x" * 100_000 + "=1"),
            ("no parameter of that name",),
            marks=pytest.mark.slow,
        ),
        pytest.param(
            ("-b", "2048"),
            ("--block 2048 is 2,048 in all; the most is 1,024",),
            marks=pytest.mark.slow,
        ),
    ],
)
def test_launch_texts_on_the_command_line(args: tuple[str, ...], fragments: tuple[str]) -> None:
    refused(shmem("trace", str(CUBIN), "-k", "trivial", *args), *fragments)


# --- buffer files ----------------------------------------------------------------------------


def _npy_header(descr: str, shape: str) -> bytes:
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    text += " " * (63 - (10 + len(text)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode()


def _buffer_cases(tmp_path: Path) -> list[tuple[str, str]]:
    cases: list[tuple[str, str]] = []

    def put(name: str, data: bytes, fragment: str) -> None:
        (tmp_path / name).write_bytes(data)
        cases.append((name, fragment))

    put("empty.npy", b"", "empty.npy is empty, not a NumPy array")
    # int32, as the trivial kernel's int* takes (a float32 array is refused for its type first)
    put("huge.npy", _npy_header("<i4", "(2199023255552,)"), "promises 8,796,093,022,208 bytes")
    put("cut.npy", _npy_header("<i4", "(1024,)") + bytes(100), "promises 4,096 bytes")
    put("objects.npy", _npy_header("|O", "(2,)") + bytes(16), "objects or empty items")
    put("garbage.npy", b"\x93NUMPY\x09\x00junk", "not a readable .npy header")
    # said in words, not as NumPy's exception
    put("badhdr.npy", _npy_header("<i4", "(4,"), "header (NumPy cannot parse it); write the")
    put("text.npy", b"1 2 3\n", "not a NumPy .npy file")
    archive = tmp_path / "arrays.npz"
    np.savez(archive, a=np.arange(4))
    put("zip.npy", archive.read_bytes(), "zip.npy is a .npz archive")
    cases.append(("arrays.npz", "arrays.npz is a .npz archive"))
    os.mkfifo(tmp_path / "fifo.bin")
    cases.append(("fifo.bin", "it is a FIFO (named pipe)"))
    (tmp_path / "folder.bin").mkdir()
    cases.append(("folder.bin", "it is a directory"))
    big = tmp_path / "sparse.bin"
    with big.open("wb") as fh:
        fh.truncate(20 << 30)  # 20 GiB of hole
    cases.append(("sparse.bin", "larger than the limit of 128 MiB"))
    return cases


def test_buffer_files_are_refused_from_what_they_claim(tmp_path: Path) -> None:
    for name, fragment in _buffer_cases(tmp_path):
        with pytest.raises(ShmemError) as err:
            read_buffer(str(tmp_path / name), "--arg 0 (out)")
        assert err.value.message.startswith("--arg 0 (out): "), err.value.message
        assert fragment in err.value.message, (name, err.value.message)
        assert err.value.code == "invalid-launch"
    if os.path.exists("/dev/zero"):
        with pytest.raises(ShmemError, match="it is a character device"):
            read_buffer("/dev/zero", "--arg 0")


def test_a_good_npy_gives_its_bytes_in_c_order(tmp_path: Path) -> None:
    array = np.arange(12, dtype=np.int16).reshape(3, 4)
    np.save(tmp_path / "f.npy", np.asfortranarray(array))
    assert read_buffer(str(tmp_path / "f.npy"), "--arg 0") == array.tobytes()
    np.save(tmp_path / "c.npy", array)
    assert npy_data((tmp_path / "c.npy").read_bytes(), "x") == array.tobytes()


@pytest.mark.slow
@needs_nvdisasm
def test_buffer_files_on_the_command_line(tmp_path: Path) -> None:
    cases = dict(_buffer_cases(tmp_path))
    for name in ("huge.npy", "fifo.bin"):  # the others: test_buffer_files_are_refused...
        ran = shmem(*TRIVIAL, "-a", f"0=@{tmp_path / name}")
        refused(
            ran, "hostile.sm_90.cubin: error: --arg 0 (out): ", str(tmp_path / name), cases[name]
        )


# --- global memory: reserved, real where written ----------------------------------------------


def test_a_huge_zero_filled_buffer_costs_nothing_until_written() -> None:
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    memory = GlobalMemory()
    memory.add_buffer(4 << 30, "big")
    memory.add_buffer(b"\x01\x02\x03\x04", "small")
    assert memory.read("small") == b"\x01\x02\x03\x04"
    assert memory.data[memory.buffer("small").offset - 1] == 0  # after the 4 GiB: zeros, no copy
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 64 << 10, grown  # KiB: the 4 GiB stayed a reservation
    assert memory.written_bytes == 4096  # the small buffer's one page


@pytest.mark.parametrize("past", [0, 4096, 1 << 20, (1 << 32) - 4, (1 << 34) + 12, -(1 << 33)])
def test_an_access_far_off_a_buffer_reaches_no_other_buffer(past: int) -> None:
    """A wrong 32-bit index lands up to 64 GiB off its buffer: never in the next buffer (a
    4 KiB gap between the addresses once let a 1 MiB overrun read it silently), always an
    error naming the buffer it is off, even where undescribed memory is allowed."""
    from shmem_cli.cuda.sass import Instruction

    ins = Instruction(0x40, None, "LDG", ("E",), (), "k.cu", 7, "LDG.E R0, [R2.64]")
    memory = GlobalMemory()
    first = memory.add_buffer(b"\x05" * 4096, "a")
    memory.add_buffer(b"\x07" * 4096, "b")
    memory.add_buffer(64, "c")
    end = first + 4096 if past >= 0 else first
    with pytest.raises(TraceError, match=r"outside every buffer \(nearest buffer 'a'"):
        memory.offsets(np.array([end + past], dtype=np.int64), 4, ins)
    assert memory.shadows == []  # not taken for undescribed memory either


def test_many_buffers_stay_below_the_generic_window_of_shared_memory() -> None:
    """Past about a thousand buffers their addresses stop being spread, so that no global
    address reaches the generic addresses that mean shared memory (state.SHARED_WINDOW_HI)."""
    from shmem_cli.trace.emulator.state import SHARED_WINDOW_HI

    memory = GlobalMemory()
    addrs = [memory.add_buffer(1 << 20, f"b{k}") for k in range(1500)]
    assert addrs == sorted(addrs) and len(set(addrs)) == len(addrs)
    assert addrs[1] - addrs[0] > 1 << 32  # spread while there is room
    assert addrs[-1] - addrs[-2] < 1 << 21  # then packed
    assert memory.window_end < SHARED_WINDOW_HI << 32


def test_pages_the_kernel_writes_are_bounded() -> None:
    from shmem_cli.cuda.sass import Instruction

    memory = GlobalMemory(max_written=64 << 10)
    base = memory.add_buffer(1 << 30, "out")
    ins = Instruction(0x40, None, "STG", ("E",), (), "k.cu", 7, "STG.E [R2.64], R5")
    memory.store_offsets(np.arange(15, dtype=np.int64) * 4096 + base, 4, ins)
    assert memory.written_bytes == 15 * 4096
    with pytest.raises(ShmemError, match="more than 0 MiB of global memory real") as err:
        memory.store_offsets(np.arange(40, dtype=np.int64) * 4096 + base, 4, ins)
    assert (err.value.path, err.value.pos.line if err.value.pos else None) == ("k.cu", 7)


@needs_nvdisasm
def test_255_pointers_each_get_a_buffer() -> None:
    ran = shmem("trace", str(CUBIN), "-k", "many255", "-b", "32", "--no-tables")
    assert ran.code == 0, ran.text[-2000:]
    assert ran.seconds < HANG_S and ran.peak_mib < PEAK_LIMIT_MIB
    assert "254 (p254)" in ran.text


@pytest.mark.slow  # several runs of shmem, each a second or more
@needs_nvdisasm
def test_the_total_of_all_buffers_is_bounded() -> None:
    big = ("trace", str(CUBIN), "-k", "many255", "-b", "32", "--no-tables")
    refused(
        shmem(*big, "--buffer-size", str(4 << 30)),
        "span 1,095,216,660,480 bytes of global memory; the most is 64 GiB",
    )
    ran = shmem(*big, "--buffer-size", str(256 << 20))  # 63.75 GiB reserved, two pages real
    assert ran.code == 0, ran.text[-2000:]
    assert ran.peak_mib < PEAK_LIMIT_MIB


@needs_nvdisasm
def test_one_thousand_pointers_are_listed() -> None:
    ran = shmem("trace", str(CUBIN), "-k", "many1000", "--list-params")
    assert ran.code == 0, ran.text[-2000:]
    assert "1000 parameter(s), 8000 bytes" in ran.text
    # extern "C": the types come from its declaration in the source (float *q0, ...)
    assert "999  q999  float *  0x1f38     8" in ran.text


# --- tensor maps --------------------------------------------------------------------------------

HOPPER = Path(__file__).parent / "data" / "trace" / "hopper" / "tma_probe.sm_90a.cubin"
TMA = ("trace", str(HOPPER), "-k", "tma_tile_16", "-b", "128", "--no-tables")


@pytest.mark.slow
@needs_nvdisasm
def test_a_tensor_map_over_2_to_the_68_bytes_is_refused() -> None:
    # the largest stride the map's 32-bit words hold (2^36 - 16 bytes) over 2^32 rows
    spec = "tensormap:dtype=u8,dims=4294967296x4294967296,box=16x1,strides=68719476720"
    span = (2**32 - 1) * (2**36 - 16) + 2**32 + 2 * (8 << 20)  # and 2 default buffers of 8 MiB
    refused(shmem(*TMA, "-a", f"0={spec}"), f"span {span:,} bytes")
    wider = spec.replace("68719476720", "1099511627760")  # below the driver's 2^40
    refused(shmem(*TMA, "-a", f"0={wider}"), "a tensor-map stride of 64 GiB or more")
    refused(shmem(*TMA, "-a", "0=tensormap:dtype=u8,dims=16x16,box=16x1,strides=" + "9" * 5000))


@needs_nvdisasm
def test_a_legal_4_gib_tensor_map_is_not_allocated() -> None:
    spec = "tensormap:dtype=u32,dims=65536x16384,box=32x64"
    ran = shmem(*TMA, "-a", f"0={spec}", "-a", f"1={spec}")
    assert ran.code == 0, ran.text[-2000:]
    assert ran.peak_mib < 400, ran.peak_mib


# --- a spec's kernel.grid ----------------------------------------------------------------------


def test_a_spec_kernel_grid_is_bounded_before_anything_is_built(tmp_path: Path) -> None:
    spec = tmp_path / "grid.yaml"
    spec.write_text(
        "block: [32]\narrays:\n  a: {dtype: float32, shape: [32]}\naccesses:\n"
        "  - {name: r, array: a, index: [lane]}\n"
        f"kernel:\n  source: {CUBIN}\n  name: trivial\n  grid: [1099511627776]\n"
    )
    ran = shmem("lint", str(spec))
    refused(ran, f"{spec}:9:9: error: kernel.grid 1099511627776: x is at most 2,147,483,647")


# --- every option's text: refused in words, each line short ---------------------------------

HUGE = "9" * 5000
SPEC = str(Path(__file__).parents[1] / "access_specs" / "transpose_naive.yaml")
KERNEL = str(Path(__file__).parent / "data" / "hostile" / "hostile.cu")


@pytest.mark.parametrize(
    "args",
    [
        ("trace", str(CUBIN), "-k", "trivial", "-b", "32", "--suggest", "--array", f"A={HUGE}:4"),
        ("trace", str(CUBIN), "-k", "trivial", "-b", "32", "--arch", "sm_" + "9" * 100_000),
        ("trace", str(CUBIN), "-k", "x" * 100_000, "-b", "32"),
        ("trace", str(CUBIN), "-k", "trivial", "-b", "32", "--rows", HUGE),
        ("sweep", KERNEL, "--define", f"PAD={HUGE}", "-b", "32"),
        ("sweep", KERNEL, "--define", f"PAD=0..{HUGE}", "-b", "32"),
        ("sweep", SPEC, "--pad", HUGE),
        ("analyze", SPEC, "--request", HUGE),
        ("verify", SPEC, "--emit", "x", "--arch", "x" * 100_000),
    ],
    ids=lambda a: " ".join(x[:12] for x in a[:1] + a[-2:]),
)
def test_long_option_texts_are_refused_short(args: tuple[str, ...]) -> None:
    from click.testing import CliRunner

    from shmem_cli.cli import main

    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 2, result.output[-1000:]
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert max(len(line) for line in result.output.splitlines()) <= 400, result.output[:1000]


@pytest.mark.slow  # 3-5 s; the other hostile launches stay fast
@needs_nvdisasm
def test_undescribed_pages_written_after_a_full_memory_range_stay_under_1_gib(
    tmp_path: Path,
) -> None:
    """128 MiB given with --memory, then a kernel writing one byte a page into undescribed
    memory until 256 MiB are real: refused at the limit, the real pages held once (not again
    as byte marks, nor twice while the arena grows or a region moves; 1.4 GiB before)."""
    given = tmp_path / "given.bin"
    given.write_bytes(bytes(range(256)) * (128 << 12))  # 128 MiB
    ran = shmem(
        "trace", str(CUBIN), "-k", "scatter_pages", "-b", "1024", "--no-tables",
        "--arg", "0=0x100000000", "--arg", "1=100", "--memory", f"0x100000000=@{given}",
    )  # fmt: skip
    refused(ran, "more than 256 MiB of global memory real", "hostile.cu:27")
    assert ran.peak_mib < 640, ran.peak_mib


def test_global_memory_past_an_address_space_limit_is_an_error() -> None:
    """Global memory is reserved address space, made real only where written: under a
    memory limit (``ulimit -v``) a 4 GiB ``--buffer-size`` could not be reserved, and the
    trace ended in numpy's MemoryError traceback (the fallback asked for the bytes whole)."""
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
        "from shmem_cli.trace.emulator.arena.pages import anonymous\n"
        "from shmem_cli.plumbing.errors import ShmemError\n"
        "try:\n"
        "    anonymous(4 << 30)\n"
        "except ShmemError as exc:\n"
        "    print(exc.message)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(
        "cannot reserve 4.0 GiB of address space for the launch's global memory ("
    ), done.stdout
    assert "raise it, or give smaller buffers (--buffer-size)" in done.stdout


def test_running_out_of_memory_under_a_limit_is_said_in_words() -> None:
    """A ``MemoryError`` that reaches the top (``guarded()``) is said in words, exit status
    2, no traceback. It happens when a trace within shmem's bounds (about 1 GiB) runs under
    a smaller memory limit: the 16,384-block `distinct` launch under a 600 MB ``ulimit -v``
    ended in numpy's MemoryError traceback. The test raises the ``MemoryError`` itself, as
    such a launch would, rather than run one under a limit (slow, and where numpy runs out
    depends on the machine)."""
    from shmem_cli.plumbing.interrupts import guarded

    stderr = io.StringIO()
    with pytest.raises(SystemExit) as done, contextlib.redirect_stderr(stderr), guarded():
        raise MemoryError
    assert done.value.code == 2
    assert stderr.getvalue().startswith("shmem: error: out of memory: the work was within")
    assert "Traceback" not in stderr.getvalue()
