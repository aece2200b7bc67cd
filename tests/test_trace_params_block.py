"""Launches as libraries make them: the whole parameter block from a file (``--params``), and
global memory the launch did not describe read as untouched device memory."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda.launch import tensormap
from shmem_cli.cuda.sass import Instruction
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator.global_memory import SEGMENT, GlobalMemory
from shmem_cli.trace.kernel.param_block import tensor_maps_in

from .conftest import needs_nvcc, needs_nvdisasm

INS = Instruction(0x40, None, "LDG", ("E",), (), "k.cu", 7, "LDG.E R0, [R2.64]")
REAL = 0x7F43_1200_0000  # a device pointer of a real run


def test_undescribed_memory_reads_zero_and_is_flagged() -> None:
    m = GlobalMemory()
    addr = REAL + 4 * np.arange(32, dtype=np.int64)
    off = m.offsets(addr, 4, INS)
    assert not m.data[off].any()
    taint = m.untouched_taint(off, 4)
    assert list(taint) == [2] * 32  # every lane read bytes never written
    assert m.untouched_reads == 32 and m.first_untouched == REAL
    assert m.shadow_summary() == ("0x7f4312000000 (64 KiB)",)


def test_what_the_kernel_wrote_reads_back_unflagged() -> None:
    m = GlobalMemory()
    addr = REAL + 8 * np.arange(4, dtype=np.int64)
    off = m.store_offsets(addr, 4, INS)
    m.data[off] = 7
    back = m.offsets(addr, 4, INS)
    assert list(m.data[back]) == [7] * 4
    assert not np.any(m.untouched_taint(back, 4))
    # the 4 bytes after each written word were not written
    assert list(m.untouched_taint(m.offsets(addr + 4, 4, INS), 4)) == [2] * 4


def test_adjacent_regions_merge_and_keep_what_was_written() -> None:
    m = GlobalMemory()
    first = np.array([REAL + 100], dtype=np.int64)
    off = m.store_offsets(first, 4, INS)  # before m.data: the arena grows
    m.data[off] = 9
    second = np.array([REAL + SEGMENT + 16], dtype=np.int64)
    m.offsets(second, 4, INS)
    # one access across the seam of the two segments: one region of both
    seam = np.array([REAL + SEGMENT - 4], dtype=np.int64)
    m.offsets(seam, 8, INS)
    assert m.shadow_summary() == ("0x7f4312000000 (128 KiB)",)
    assert m.data[m.offsets(first, 4, INS)][0] == 9
    assert not np.any(m.untouched_taint(m.offsets(first, 4, INS), 4))


def test_a_described_buffer_still_catches_an_overrun() -> None:
    m = GlobalMemory()
    base = m.add_buffer(64, "in")
    with pytest.raises(ShmemError, match="outside every buffer .*nearest buffer 'in'"):
        m.offsets(np.array([base + 64], dtype=np.int64), 4, INS)


def test_an_overrun_of_a_made_up_buffer_says_how_to_size_it() -> None:
    m = GlobalMemory()
    first = m.add_buffer(64, "out", made="out")
    m.add_buffer(64, "in", made="2")
    with pytest.raises(ShmemError) as err:
        m.offsets(np.array([first + 64 + 8], dtype=np.int64), 4, INS)
    text = err.value.message
    assert "nearest buffer 'out'" in text and "8 bytes past its end" in text
    assert "--buffer-size BYTES, or the data with --arg out=@FILE" in text


def test_an_overrun_of_a_given_buffer_names_no_buffer_size() -> None:
    m = GlobalMemory()
    base = m.add_buffer(b"\0" * 64, "in")
    with pytest.raises(ShmemError) as err:
        m.offsets(np.array([base + 64], dtype=np.int64), 4, INS)
    assert "just past its end" in err.value.message
    assert "--buffer-size" not in err.value.message


@needs_nvdisasm
def test_a_launch_past_its_zero_filled_buffer_is_told_of_buffer_size() -> None:
    # column_read reads in[0..1023] (4 KiB); 64-byte buffers are overrun by the first warps
    cubin = Path(__file__).parent / "data" / "trace" / "column_read.sm_90.cubin"
    res = CliRunner().invoke(
        main, ["trace", str(cubin), "-b", "32,32", "--buffer-size", "64", "--no-tables"]
    )
    assert res.exit_code == 2, res.output
    assert "nearest buffer 'in'" in res.output
    assert "give the launch's real sizes with --buffer-size BYTES" in res.output
    assert "--arg in=@FILE" in res.output
    assert "Traceback" not in res.output


@pytest.mark.parametrize("address", [0, 0x40, 1 << 50])
def test_a_null_or_impossible_pointer_is_an_error(address: int) -> None:
    with pytest.raises(ShmemError, match="not a device address"):
        GlobalMemory().offsets(np.array([address], dtype=np.int64), 4, INS)


def test_the_undescribed_address_space_is_bounded() -> None:
    m = GlobalMemory()
    far = np.array([REAL + k * (1 << 30) for k in range(8)], dtype=np.int64)
    m.offsets(far, 4, INS)  # 8 regions of 64 KiB, far apart: cheap
    assert len(m.shadows) == 8
    with pytest.raises(ShmemError, match="more than 16 GiB of global memory the launch did not"):
        m.offsets(np.array([REAL], dtype=np.int64), 17 << 30, INS)  # one access that wide


def _map(address: int) -> bytes:
    tm = tensormap.TensorMap(
        address=address,
        dtype="bfloat16",
        dims=(4096, 128),
        strides=(8192,),
        box=(64, 128),
        elem_strides=(1, 1),
        swizzle=128,
    )
    return tensormap.encode(tm)


def test_tensor_maps_inside_a_parameter_block_are_found() -> None:
    block = struct.pack("<QQii", REAL, REAL + 4096, 128, 64).ljust(64, b"\0")
    block += _map(REAL) + bytes(64) + _map(REAL + (1 << 20))
    found = tensor_maps_in(block)
    assert [at for at, _ in found] == [64, 256]
    assert found[0][1].address == REAL and found[0][1].box == (64, 128)
    # numbers that happen to decode are not taken for a map: no box size where the driver
    # writes it
    noise = bytearray(_map(REAL))
    noise[64:68] = b"\0\0\0\0"
    assert tensor_maps_in(bytes(noise)) == []


def _batch_of_one(address: int) -> bytes:
    """A rank-3 map of a batch of one as CUTLASS 3.x encodes it: the batch dimension's stride
    0 (word 4 of the driver's layout, tensormap.py), which the driver takes."""
    tm = tensormap.TensorMap(address, "uint32", (32, 16, 1), (128, 2048), (32, 16, 1), (1, 1, 1))
    words = list(struct.unpack("<32I", tensormap.encode(tm)))
    assert words[4] == 2048 >> 4
    words[4] = 0
    return struct.pack("<32I", *words)


def test_a_map_with_a_zero_stride_for_a_batch_of_one_is_found() -> None:
    block = bytes(64) + _batch_of_one(REAL)
    ((at, tm),) = tensor_maps_in(block)
    assert at == 64 and tm.dims == (32, 16, 1) and tm.strides == (128, 0)
    # a zero stride is refused where the dimension is not of size 1
    with pytest.raises(tensormap.TensorMapError, match="0 only for a dimension of size 1"):
        tensormap.parse_spec("tensormap:dtype=u32,dims=32x16x2,box=32x16x1,strides=128x0")
    assert tensormap.parse_spec("tensormap:dtype=u32,dims=32x16x1,box=32x16x1,strides=128x0")


def test_a_map_whose_box_passes_its_size_word_is_refused_in_words() -> None:
    """Five box sizes of 256 doubles (2^43 bytes) decode from the driver's words but fit no
    32-bit box-size word (word 16): refused by the map's check, not a struct error on
    encoding (the fuzz's CUtensorMap target found it)."""
    tm = tensormap.TensorMap(
        REAL, "float64", (256,) * 5, (2048, 2048 * 256, 2048 << 16, 2048 << 24), (16, 1, 1, 1, 1),
        (1,) * 5,
    )  # fmt: skip
    words = list(struct.unpack("<32I", tensormap.encode(tm)))
    words[13] |= 0xFF << 24  # box[0] = 256
    words[14] = 0xFFFFFFFF  # box[1..4] = 256
    big = tensormap.decode(struct.pack("<32I", *words))
    assert big is not None and big.box == (256,) * 5
    with pytest.raises(tensormap.TensorMapError, match="cannot land in shared memory"):
        big.check()


# the project's TMA probe (tests/data/trace/hopper/kernels/tma_probe.cu): tma_ranks takes maps
# m1, m2, m3, m5 at 0x70, 0xf0, 0x170, 0x1f0, then out and red (0x270, 0x278): 640 bytes
TMA_PROBE = Path(__file__).parent / "data" / "trace" / "hopper" / "tma_probe.sm_90a.cubin"


@needs_nvdisasm
def test_tma_through_zero_maps_of_a_parameter_block_says_how_to_encode_them(
    tmp_path: Path,
) -> None:
    block = bytearray(640)  # the maps never encoded, as a host program without a GPU leaves them
    struct.pack_into("<QQ", block, 0x270, REAL, REAL + (1 << 20))
    block[0x170:0x1F0] = _batch_of_one(REAL + (2 << 20))  # m3 encoded, by the stand-in
    path = tmp_path / "params.bin"
    path.write_bytes(bytes(block))
    args = ["trace", str(TMA_PROBE), "-k", "tma_ranks", "-b", "32", "--params", f"@{path}"]
    res = CliRunner().invoke(main, [*args, "--no-tables"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "2 (m3)=tensor map: uint32 32x16x1, box 32x16x1" in text
    # m1 and m5 are zero bytes: their two loads moved nothing, and the note says why and how
    assert "2 TMA instruction execution(s) (not modelled, above) went through a tensor" in text
    assert "docs/examples/tensormap_standin.h" in text
    res = CliRunner().invoke(main, [*args, "--format", "json"])
    (kernel,) = json.loads(res.output)["files"][0]["kernels"]
    assert "tensor map of zero bytes" in kernel["tensor_map_note"]


PARAMS_CU = """
struct Params { const float *in; float *out; int n; int ld; int pad; };
__global__ void params_kernel(Params p) {
  __shared__ float s[32 * 34];
  int tx = threadIdx.x, ty = threadIdx.y;
  s[ty * p.ld + tx] = p.in[ty * p.n + tx];
  __syncthreads();
  p.out[ty * p.n + tx] = s[tx * p.ld + ty + p.pad];
}
"""


def _block(ld: int, pad: int) -> bytes:
    return struct.pack("<QQiii4x", REAL, REAL + (4 << 20), 32, ld, pad)


@needs_nvcc
@pytest.mark.parametrize(
    ("ld", "pad", "load"),
    # the conflicted layout in `make test`, the two padded ones slow
    [
        (32, 0, 32),
        pytest.param(33, 1, 1, marks=pytest.mark.slow),
        pytest.param(34, 2, 2, marks=pytest.mark.slow),
    ],
)
def test_a_parameter_block_with_real_pointers_traces(
    tmp_path: Path, ld: int, pad: int, load: int
) -> None:
    src = tmp_path / "params.cu"
    src.write_text(PARAMS_CU)
    blob = tmp_path / "params.bin"
    blob.write_bytes(_block(ld, pad))
    res = CliRunner().invoke(
        main,
        ["trace", str(src), "-b", "32,32", "--params", f"@{blob}", "--format", "json"],
    )
    assert res.exit_code == 0, res.output
    k = json.loads(res.output)["files"][0]["kernels"][0]
    by_op = {a["op"]: a for a in k["accesses"]}
    # the row store s[ty * ld + tx] is conflict-free; the column read s[tx * ld + ty + pad]
    # puts lane tx in bank (tx * ld + c) % 32: gcd(ld, 32) lanes per bank (32 warps)
    assert by_op["store"]["wavefronts"] == 32
    assert by_op["load"]["wavefronts"] == 32 * load
    assert k["undescribed_memory"]["regions"] == [
        "0x7f4312000000 (64 KiB)",
        "0x7f4312400000 (64 KiB)",
    ]
    assert k["undescribed_memory"]["unwritten_reads"] == 1024
    assert k["arguments"] == {"0 (p)": f"from {blob}"}


def test_a_file_far_larger_than_the_block_is_said_by_its_size(tmp_path: Path) -> None:
    """A file past the read bound (the block and 64 KiB for a .npy's header) is told by its
    size against the block's, as a short one is; it was 'larger than the limit of 65,568
    bytes; give a smaller file (or split it)'."""
    from shmem_cli.cuda.launch.values import LaunchError
    from shmem_cli.trace.kernel.param_block import read_param_block

    blob = tmp_path / "whole_run.bin"
    blob.write_bytes(bytes(100_000))
    with pytest.raises(LaunchError) as err:
        read_param_block(f"@{blob}", 32, "params_kernel")
    said = err.value.message
    assert said.startswith("--params ") and "whole_run" not in said.split(": ", 1)[1]
    assert said.split(": ", 1)[1].startswith(
        "100,000 bytes; params_kernel's parameter block is 32 bytes (write sizeof() of the "
        "struct it takes"
    )


@pytest.mark.slow
@needs_nvcc
def test_a_block_of_the_wrong_size_is_said(tmp_path: Path) -> None:
    src = tmp_path / "params.cu"
    src.write_text(PARAMS_CU)
    blob = tmp_path / "short.bin"
    blob.write_bytes(bytes(12))
    res = CliRunner().invoke(main, ["trace", str(src), "-b", "32,32", "--params", f"@{blob}"])
    assert res.exit_code == 2
    assert "12 bytes; params_kernel's parameter block is 32 bytes" in " ".join(res.output.split())


ALIGNED_CU = """
struct alignas(64) Params { unsigned char map[128]; const float *in; int ld; };
__global__ void aligned_kernel(const __grid_constant__ Params p) {
  __shared__ float s[32 * 33];
  int tx = threadIdx.x, ty = threadIdx.y;
  s[ty * p.ld + tx] = p.in[ty * 32 + tx];
  __syncthreads();
  const_cast<float *>(p.in)[ty * 32 + tx] = s[tx * p.ld + ty];
}
"""


@pytest.mark.slow
@needs_nvcc
def test_a_struct_dumped_by_sizeof_lands_where_the_aligned_parameter_starts(
    tmp_path: Path,
) -> None:
    """A 64-byte aligned struct (as one holding CUtensorMaps) starts past the parameter
    space's first bytes: the host's sizeof() dump is placed there, and a map inside it is
    found at the constant bank's 64-byte alignment."""
    src = tmp_path / "aligned.cu"
    src.write_text(ALIGNED_CU)
    listed = CliRunner().invoke(main, ["trace", str(src), "--list-params"])
    # the block is 240 bytes: the struct (192) starts at 0x30, where 0x210 + 0x30 is 64-aligned
    assert "0x30   192" in listed.output and "240 bytes at c[0x0][0x210]" in listed.output
    blob = tmp_path / "params.bin"
    body = _map(REAL + (1 << 20)) + struct.pack("<Qi", REAL, 33)
    blob.write_bytes(body.ljust(192, b"\0"))  # sizeof(Params): 192
    res = CliRunner().invoke(
        main,
        ["trace", str(src), "-b", "32,32", "--params", f"@{blob}", "--format", "json"],
    )
    assert res.exit_code == 0, res.output
    k = json.loads(res.output)["files"][0]["kernels"][0]
    by_op = {a["op"]: a for a in k["accesses"]}
    assert by_op["load"]["wavefronts"] == 32  # ld 33: the column read is conflict-free
    (text,) = k["arguments"].values()
    assert "tensor map: " in text and "box 64x128" in text.replace(" x ", "x")
