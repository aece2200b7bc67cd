"""Values at an offset inside a parameter, ``--arg KEY+OFFSET=VALUE`` (issue 29): a device
pointer inside a struct passed by value, as CuTe passes a ``Tensor`` (its layout, then
its gmem pointer) and a CUTLASS ``Params`` block holds its operands.

The project's own kernel (tests/data/trace/fields/view.cu) takes ``struct View { float *p;
int n; int stride; }`` by value and ``float *out``; each thread t < n stores p[t] into shared
word t * stride, and after the barrier writes out[t] = the word thread n - 1 - t stored, so
out[t] = p[n - 1 - t] and out[t >= n] keeps its bytes.

Expected figures, by hand, for block 64 and n = 48 (two warps: warp 0 has 32 lanes at
work, warp 1 the 16 lanes t = 32..47); one request per warp for the store and for the load:

* stride 2: warp 0 stores words 0, 2, ..., 62, two to each even bank: 2 wavefronts; warp 1
  words 64, ..., 94, one to each even bank: 1. The load reads words 94, 92, ..., 32 (warp
  0; two per even bank: 2) and 30, ..., 0 (warp 1: 1). Store and load: 2 requests, 3
  wavefronts each.
* stride 1: consecutive words, one wavefront per request: 2 requests, 2 wavefronts each.
"""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import shmem_cli
from shmem_cli.cli import main
from shmem_cli.cuda.launch.files import MAX_FILE_BYTES
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator.global_memory import GlobalMemory
from shmem_cli.trace.kernel.cubin import find_kernel
from shmem_cli.trace.kernel.launch import kernel_params, plan_launch
from shmem_cli.trace.tracer import find_function, trace_kernel

from .conftest import TRACE_DATA, fast_few, needs_nvdisasm
from .test_trace_launch import Memory, kernel
from .test_trace_measured import cubin

CUBIN = TRACE_DATA / "fields" / "view.sm_90.cubin"
N = 48
DATA = np.arange(N, dtype=np.float32) * 3 + 1  # 1, 4, 7, ...: no two alike
OUT_BYTES = 64 * 4  # one float per thread of the block
# a made-up device address, as a host program's cudaMalloc hands them out
FAR = 0x7F12_3400_0000


def _expected_out() -> bytes:
    """out after the launch, from CUDA's semantics: out[t] = p[n - 1 - t] for t < n; the
    bytes past n stay as given (0xAB here)."""
    out = bytearray(b"\xab" * OUT_BYTES)
    out[: N * 4] = DATA[::-1].tobytes()
    return bytes(out)


def test_the_kept_data_file_is_the_tests_data() -> None:
    # docs/trace.md's example traces the kept file: the data these tests write
    assert (CUBIN.parent / "data.bin").read_bytes() == DATA.tobytes()


def _files(tmp_path: Path) -> tuple[Path, Path]:
    data, out = tmp_path / "data.bin", tmp_path / "out.bin"
    data.write_bytes(DATA.tobytes())
    out.write_bytes(b"\xab" * OUT_BYTES)
    return data, out


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(main, ["trace", str(CUBIN), "-b", "64", *args])
    return res.exit_code, res.output


def _totals(output: str) -> dict[str, tuple[int, int]]:
    kernel = json.loads(output)["files"][0]["kernels"][0]
    return {
        op: (kernel["totals"][op]["requests"], kernel["totals"][op]["wavefronts"])
        for op in ("load", "store")
    }


# -- the launch: where the values go ------------------------------------------------------


def test_the_parameter_bytes_hold_the_pointer_and_the_numbers(tmp_path: Path) -> None:
    from shmem_cli.trace.kernel.cubin import read_cubin

    data, _ = _files(tmp_path)
    k = find_kernel(read_cubin(CUBIN), None)
    args = [f"0+0=@{data}", "0+8=48", "0+0xc=-2:4", "1+0=zeros:256"]
    plan = plan_launch(k, kernel_params(k, None), block=(64, 1, 1), args=args)
    memory = Memory()
    image = plan.param_bytes(memory)
    # the Memory stand-in hands out 0x1000, 0x2000, ... in the order buffers are added
    assert image == struct.pack("<QiiQ", 0x1000, 48, -2, 0x2000)
    assert memory.buffers == [("param0+0", DATA.tobytes()), ("param1+0", 256)]
    assert not plan.zero_filled and not plan.defaulted  # every byte was given


def test_offsets_and_sizes_with_leading_zeros_are_decimal() -> None:
    # '010' is ten, as a launch's numbers read (cuda.launch.values); it was a ValueError traceback
    from shmem_cli.trace.kernel.cubin import read_cubin

    k = find_kernel(read_cubin(CUBIN), None)
    args = ["0+008=048", "0+0012=-2", "1+00=zeros:0256"]
    plan = plan_launch(k, kernel_params(k, None), block=(64, 1, 1), args=args)
    memory = Memory()
    image = plan.param_bytes(memory)
    assert image[8:24] == struct.pack("<iiQ", 48, -2, 0x1000)
    assert memory.buffers == [("param1+0", 256)]


def test_widths_floats_and_a_parameter_block_under_the_fields(tmp_path: Path) -> None:
    from shmem_cli.trace.kernel.cubin import read_cubin

    block = tmp_path / "block.bin"  # p at a made-up address, n = 48, stride 2, out made up
    block.write_bytes(struct.pack("<QiiQ", FAR, 48, 2, FAR + 0x10000))
    k = find_kernel(read_cubin(CUBIN), None)
    params = kernel_params(k, None)
    plan = plan_launch(
        k, params, block=(64, 1, 1), params_file=f"@{block}", args=["0+12=7:2", "0+14=1.5:2"]
    )
    image = plan.param_bytes(Memory())
    # only bytes 12-15 change: 7 as a 2-byte int, 1.5 as a half (0x3e00)
    assert image == struct.pack("<QiHHQ", FAR, 48, 7, 0x3E00, FAR + 0x10000)
    plan = plan_launch(k, params, block=(64, 1, 1), args=["0=1,2,3,4", "0+8=2.5:8"])
    image = plan.param_bytes(Memory())
    assert image[:16] == struct.pack("<iid", 1, 2, 2.5)  # a double over the last two ints


def test_a_tensor_map_at_an_offset_keeps_the_rest_of_the_block(tmp_path: Path) -> None:
    # a 256-byte Params struct from --params: a map put at +128 replaces those 128 bytes only
    # (it used to zero the first 128 too)
    block = tmp_path / "block.bin"
    block.write_bytes(b"\xab" * 256)
    k = kernel([(0, 256)])
    params = kernel_params(k, None)
    spec = "0+128=tensormap:dtype=u8,dims=64,box=16"
    plan = plan_launch(k, params, block=(32, 1, 1), params_file=f"@{block}", args=[spec])
    image = plan.param_bytes(Memory())
    assert image[:128] == b"\xab" * 128
    assert struct.unpack_from("<Q", image, 128) == (0x1000,)  # the map's global address


@needs_nvdisasm
def test_the_kernel_reads_through_the_pointer_in_its_struct(tmp_path: Path) -> None:
    data, out = _files(tmp_path)
    info, disassembly = cubin(CUBIN)
    k = find_kernel(info, None)
    args = [f"0+0=@{data}", "0+8=48", "0+12=2", f"1=@{out}"]
    plan = plan_launch(k, kernel_params(k, None), block=(64, 1, 1), args=args)
    memory = GlobalMemory()
    kt = trace_kernel(find_function(disassembly, k, info.path), k, info.arch, plan, memory=memory)
    assert memory.read("param1") == _expected_out()
    assert memory.read("param0+0") == DATA.tobytes()  # the buffer the field points to
    totals = kt.to_json()["totals"]
    assert (totals["store"]["requests"], totals["store"]["wavefronts"]) == (2, 3)
    assert (totals["load"]["requests"], totals["load"]["wavefronts"]) == (2, 3)


@needs_nvdisasm
def test_the_cli_traces_the_struct_and_lists_its_fields(tmp_path: Path) -> None:
    data, out = _files(tmp_path)
    code, output = _cli(
        "--arg", f"v+0=@{data}", "--arg", "v+8=48", "--arg", "v+12=2", "--arg", f"out=@{out}",
        "--format", "json",
    )  # fmt: skip
    assert code == 0, output
    assert _totals(output) == {"load": (2, 3), "store": (2, 3)}
    kernel = json.loads(output)["files"][0]["kernels"][0]
    assert kernel["arguments"]["0 (v)"] == (
        f"+0: pointer to @{data} (192 B); +8: 48 (4 B); +12: 2 (4 B); the rest: 0"
    )
    assert kernel["zero_filled_buffers"] == [] and kernel["defaulted_arguments"] == []
    # stride 1: conflict-free, one wavefront per request (the field's value is the kernel's)
    code, output = _cli(
        "--arg", f"v+0=@{data}", "--arg", "v+8=48", "--arg", "v+12=1", "--arg", f"out=@{out}",
        "--format", "json",
    )  # fmt: skip
    assert code == 0, output
    assert _totals(output) == {"load": (2, 2), "store": (2, 2)}


@needs_nvdisasm
def test_a_field_backs_a_made_up_pointer_of_a_parameter_block(tmp_path: Path) -> None:
    """A CUTLASS-style block dumped by a host program: its device addresses mean nothing
    here; ``--arg 0+0=@FILE`` backs the first with data, n and stride stay the block's."""
    data, out = _files(tmp_path)
    block = tmp_path / "block.bin"
    block.write_bytes(struct.pack("<QiiQ", FAR, N, 2, FAR + 0x10000))
    code, output = _cli(
        "--params", f"@{block}", "--arg", f"0+0=@{data}", "--arg", f"1=@{out}", "--format", "json"
    )
    assert code == 0, output
    assert _totals(output) == {"load": (2, 3), "store": (2, 3)}
    kernel = json.loads(output)["files"][0]["kernels"][0]
    assert kernel["arguments"]["0 (v)"].endswith(f"; the rest: from {block}")
    assert kernel["undescribed_memory"]["regions"] == []  # nothing read at the made-up address


@needs_nvdisasm
def test_the_python_api_and_a_spec_take_the_same_text(tmp_path: Path) -> None:
    result = shmem_cli.trace(
        CUBIN, block=64, args={"v+0": DATA, "v+8": 48, "v+12": 2, "out": bytes(OUT_BYTES)}
    )
    assert (result.totals["store"].requests, result.totals["store"].wavefronts) == (2, 3)
    assert (result.totals["load"].requests, result.totals["load"].wavefronts) == (2, 3)

    from shmem_cli.lint.kernel_trace import KernelUnavailable, trace_spec_kernel
    from shmem_cli.spec.compile import spec_from_mapping

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".git").mkdir()  # the spec's repository: its source tree
    shutil.copy(CUBIN, tree / CUBIN.name)
    _files(tree)
    doc = {
        "name": "view",
        "block": [64],
        "kernel": {
            "source": CUBIN.name,
            "args": {"0+0": "@data.bin", "0+8": 48, "0+12": 1, "1": "@out.bin"},
        },
        "arrays": {"tile": {"dtype": "float", "shape": [1024]}},
        "accesses": [{"array": "tile", "index": ["threadIdx.x"], "op": "store"}],
    }
    spec = spec_from_mapping(doc, name=str(tree / "view.yaml"))
    assert spec.kernel is not None
    assert dict(spec.kernel.args)["0+0"] == "@" + str(tree / "data.bin")  # relative to it
    kt = trace_spec_kernel(spec.kernel, (64, 1, 1))
    assert not isinstance(kt, KernelUnavailable), kt
    totals = kt.to_json()["totals"]
    assert (totals["store"]["requests"], totals["store"]["wavefronts"]) == (2, 2)


# -- what is refused, and how it is said ----------------------------------------------------


def _refused(tmp_path: Path, *args: str) -> str:
    code, output = _cli(*args)
    assert code == 2, output
    assert "Traceback" not in output
    return " ".join(output.split())


BAD = {  # id: (--arg texts, what the error says)
    "offset-word": (["0+x=@D"], "--arg 0+x: the offset after '+' must be a number of bytes"),
    "offset-negative": (["0+-8=@D"], "(decimal or 0x...), got '-8'"),
    "offset-leading-zero-misaligned": (["0+04=@D"], "+4 is not (+0 or +8?)"),
    "misaligned": (
        ["0+4=@D"],
        "--arg 0+4: a pointer goes at an offset that is a multiple of 8; +4 is not (+0 or +8?)",
    ),
    "past-the-end": (
        ["0+16=@D"],
        "--arg 0+16: a pointer (8 bytes) at +16 ends past parameter 0 (v), which has 16 bytes",
    ),
    "number-misaligned": (["0+14=1:4"], "a 4-byte number goes at an offset that is a multiple"),
    "bad-width": (["0+8=1:3"], "--arg 0+8=1:3: at an offset give one of @FILE (a pointer to"),
    "list": (["0+8=1,2"], "NUMBER[:WIDTH] (one number of 1, 2, 4 or 8 bytes; default 4)"),
    "not-a-number": (["0+8=x"], "--arg 0+8: 'x' is not a number"),
    "overlap": (
        ["0+8=48:8", "0+12=2"],
        "--arg 0+8 (bytes 8-15) and --arg 0+12 (bytes 12-15) of parameter 0 (v) overlap: "
        "give each byte once",
    ),
    "same-bytes-by-name": (["0+8=1", "v+8=2"], "--arg 0+8 (bytes 8-11) and --arg v+8 (bytes"),
    "missing-file": (["0+0=@MISSING"], "--arg 0+0: cannot read"),
    "empty-file": (["0+0=@EMPTY"], "empty.bin holds no bytes"),
    "zero-size": (
        ["0+0=zeros:0"],
        "--arg 0+0: zeros:BYTES wants a count of bytes from 1 to 68,719,476,736 (64 GiB)",
    ),
    "too-much-memory": (
        ["0+0=zeros:0x1000000000"],
        # the field's buffer (64 GiB, the most one may be) and out's zero-filled one of
        # --buffer-size (8 MiB)
        f"span {0x10_0000_0000 + (8 << 20):,} bytes of global memory; the most is 64 GiB",
    ),
    "whole-and-parts": (
        ["1=@D", "1+0=@D"],
        "--arg 1 (out): given whole as @FILE and in parts with --arg out+OFFSET=...: give one "
        "or the other",
    ),
    "no-parameter": (["9+0=@D"], "--arg 9: the kernel has 2 parameter(s), positions 0-1"),
    "whole-struct-hint": (["0=@D"], "(a pointer inside a struct: --arg v+OFFSET=@FILE)"),
    "map-past-the-end": (
        ["0+64=tensormap:dtype=u8,dims=64,box=16"],
        "a tensor map (128 bytes) at +64 ends past parameter 0 (v)",
    ),
}


@pytest.mark.parametrize(("args", "said"), fast_few(list(BAD.values()), tuples=True), ids=list(BAD))
def test_bad_fields_are_refused_with_the_fix(tmp_path: Path, args: list[str], said: str) -> None:
    data, _ = _files(tmp_path)
    (tmp_path / "empty.bin").write_bytes(b"")
    names = {"@D": data, "@MISSING": tmp_path / "nope.bin", "@EMPTY": tmp_path / "empty.bin"}
    options: list[str] = []
    for a in args:
        key, _, value = a.partition("=")
        options += ["--arg", f"{key}=@{names[value]}" if value in names else a]
    assert said in _refused(tmp_path, *options)


def test_buffer_files_past_the_launch_s_bound_are_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"  # sparse: its size is read, never its bytes
    with open(big, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    said = _refused(tmp_path, "--arg", f"0+0=@{big}")
    assert "--arg 0+0:" in said and "big.bin" in said
    half = tmp_path / "half.bin"
    with open(half, "wb") as f:
        f.truncate(MAX_FILE_BYTES // 2 + 8)
    out = tmp_path / "out.bin"
    with open(out, "wb") as f:
        f.truncate(MAX_FILE_BYTES // 2)
    said = _refused(tmp_path, "--arg", f"0+0=@{half}", "--arg", f"1=@{out}")
    total = MAX_FILE_BYTES + 8
    assert (
        f"the buffer files of the launch hold {total:,} bytes in all; the most is 128 MiB" in said
    )


def test_the_api_refuses_as_the_cli_does() -> None:
    with pytest.raises(
        ShmemError, match=r"--arg v\+4: a pointer goes at an offset that is a multiple of 8"
    ):
        shmem_cli.trace(CUBIN, block=64, args={"v+4": b"\x00" * 16})
