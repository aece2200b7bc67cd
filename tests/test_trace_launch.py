"""Launch building for shmem trace: sizes, --arg packing, buffers (trace.kernel.launch)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest

from shmem_cli.cuda.launch.values import as_typed
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.emulator.global_memory import GlobalMemory
from shmem_cli.trace.kernel.cubin import Kernel, KernelParam, read_cubin
from shmem_cli.trace.kernel.launch import parse_dims, plan_launch, value_bytes
from shmem_cli.trace.kernel.param_block import Handover
from shmem_cli.trace.kernel.params import Param, kernel_params, param_table, signature_types

from .conftest import TRACE_DATA as DATA


class Memory:
    """A stand-in for the emulator's global memory: buffers at 0x1000, 0x2000, ..."""

    def __init__(self) -> None:
        self.buffers: list[tuple[str, bytes | int]] = []

    def add_buffer(
        self,
        content: bytes | int | Handover,
        name: str,
        size: int | None = None,
        *,
        made: str | None = None,
    ) -> int:
        kept = content.take() if isinstance(content, Handover) else content  # handed over
        self.buffers.append((name, kept))
        return 0x1000 * len(self.buffers)


def kernel(params: list[tuple[int, int]], signature: str = "k") -> Kernel:
    return Kernel(
        mangled="k",
        name="k",
        signature=signature,
        params=tuple(KernelParam(i, off, size) for i, (off, size) in enumerate(params)),
        param_base=0x210,
        param_bytes=max(off + size for off, size in params),
        shared_section_bytes=0,
        reserved_shared_bytes=0,
        code_bytes=0,
    )


def test_dims() -> None:
    assert parse_dims("32", "--block", limit=1024) == (32, 1, 1)
    assert parse_dims("32,8", "--block", limit=1024) == (32, 8, 1)
    assert parse_dims("4x4x2", "--grid", limit=1 << 16) == (4, 4, 2)
    with pytest.raises(ShmemError, match="--block 64,32 is 2,048 in all; the most is 1,024"):
        parse_dims("64,32", "--block", limit=1024)
    for bad in ("", "0", "a", "1,2,3,4", "-1"):
        with pytest.raises(ShmemError, match="--block"):
            parse_dims(bad, "--block", limit=1024)


@pytest.mark.parametrize(
    ("text", "size", "expected"),
    [
        ("64", 4, struct.pack("<i", 64)),
        ("-1", 4, struct.pack("<i", -1)),
        ("0xff", 1, b"\xff"),
        ("4294967295", 4, struct.pack("<I", 4294967295)),
        ("1.5", 4, struct.pack("<f", 1.5)),
        ("1e-3", 8, struct.pack("<d", 1e-3)),
        ("2.0", 2, struct.pack("<e", 2.0)),
        ("7", 8, struct.pack("<q", 7)),
        # a struct by value: 12 bytes in three 4-byte fields
        ("128,128,64", 12, struct.pack("<3i", 128, 128, 64)),
        # 8 bytes in two fields: two 4-byte values; 16 in two: two 8-byte values
        ("3,4", 8, struct.pack("<2i", 3, 4)),
        ("3,4", 16, struct.pack("<2q", 3, 4)),
        # 12 bytes in two fields does not split evenly into 1/2/4/8: 4-byte fields, rest zero
        ("1,2", 12, struct.pack("<2i", 1, 2) + bytes(4)),
        ("1.5,2", 8, struct.pack("<fi", 1.5, 2)),
        # a bool as C++ and Python spell it
        ("true", 1, b"\x01"),
        ("False", 1, b"\x00"),
        ("TRUE", 4, struct.pack("<i", 1)),
    ],
)
def test_values_are_packed_little_endian(text: str, size: int, expected: bytes) -> None:
    param = Param(0, 0, size, "x", None)
    assert value_bytes(text, param) == expected


@pytest.mark.parametrize(
    ("text", "size", "message"),
    [
        ("256", 1, "256 does not fit in 1 byte(s)"),
        ("1.5", 1, "a float needs a 2-, 4- or 8-byte field"),
        ("abc", 4, "'abc' is not a number"),
        ("1,2,3", 8, "3 fields of 4 bytes do not fit in the parameter's 8 bytes"),
    ],
)
def test_bad_values_say_why(text: str, size: int, message: str) -> None:
    with pytest.raises(ShmemError) as err:
        value_bytes(text, Param(2, 0, size, "x", None))
    assert err.value.message.startswith("--arg 2 (x)")
    assert message in err.value.message


def test_a_struct_s_field_that_does_not_fit_its_share_names_the_offsets() -> None:
    """view.cu's ``View { float *p; int n; int stride; }`` (16 bytes) given as three numbers
    splits into 4-byte fields, where the pointer does not fit: the refusal says how the
    values were split and how to give each field at its offset."""
    with pytest.raises(ShmemError) as err:
        value_bytes("0x7f0000000000,48,2", Param(0, 0, 16, "v", "View"))
    assert err.value.message == (
        "--arg 0 (v) field 0: 0x7f0000000000 does not fit in 4 byte(s) (from -0x80000000 to "
        "0xffffffff, signed or unsigned); 3 values are 4-byte fields from offset 0 of the "
        "16-byte parameter (a struct of fields of other sizes takes each at its offset: --arg "
        "v+OFFSET=VALUE:WIDTH, e.g. v+8=0x7f0000000000:8, a pointer's buffer as v+OFFSET=@FILE)"
    )


def test_signature_types() -> None:
    assert signature_types("void k<32>(float*, float const*, int, Dims)") == [
        "float*",
        "float const*",
        "int",
        "Dims",
    ]
    assert signature_types("k()") == []
    assert signature_types("by_value") is None


def test_pointers_get_buffers_and_scalars_default_to_zero() -> None:
    k = kernel([(0, 8), (8, 8), (16, 4), (20, 4)], "void k(float*, float const*, int, float)")
    params = kernel_params(k, ["out", "in", "n", "scale"])
    plan = plan_launch(k, params, block=(32, 1, 1), args=["n=5"], buffer_size=4096)
    memory = Memory()
    image = plan.param_bytes(memory)
    assert memory.buffers == [("out", 4096), ("in", 4096)]
    assert struct.unpack("<QQif", image) == (0x1000, 0x2000, 5, 0.0)
    assert plan.zero_filled == ("0 (out)", "1 (in)")
    assert plan.defaulted == ("3 (scale)",)


@pytest.mark.parametrize("large", [False, True])  # read whole, or read later in place
def test_a_npy_of_another_element_type_than_the_pointer_s_is_refused(
    tmp_path: Path, large: bool
) -> None:
    # NumPy's default arrays are float64 and int64: given to a float* or an int*, each
    # element was read as two of the kernel's, silently (a token id's high word as the next id)
    k = kernel([(0, 8), (8, 8), (16, 8)], "void k(float const*, int*, __half*)")
    params = kernel_params(k, ["x", "ids", "h"])
    n = (1 << 18) if large else 16  # 2 MiB of float64: past the size read in place
    wrong = {"x": np.zeros(n), "ids": np.arange(n), "h": np.zeros(n, dtype=np.float32)}
    said = {
        "x": "holds float64 (8 bytes an element) and the parameter is float const*: the kernel "
        "would read its bytes as 4-byte floats; save it as float32 "
        "(numpy.save(FILE, a.astype(numpy.float32))), or give raw bytes in a .bin",
        "ids": "holds int64 (8 bytes an element) and the parameter is int*: the kernel would "
        "read its bytes as 4-byte integers; save it as int32",
        "h": "holds float32 (4 bytes an element) and the parameter is __half*: the kernel "
        "would read its bytes as 2-byte floats; save it as float16",
    }
    for name, array in wrong.items():
        path = tmp_path / f"{name}.npy"
        np.save(path, array)
        with pytest.raises(ShmemError) as err:
            plan_launch(k, params, block=(32, 1, 1), args=[f"{name}=@{path}"])
        assert said[name] in err.value.message and err.value.code == "invalid-launch"
    # the same sizes and kinds pass (uint32 for an int*: the same bytes); so do raw bytes
    # (uint8) and a type the table does not know (a struct's pointer)
    right = {"x": np.float32, "ids": np.uint32, "h": np.float16}
    for name, dtype in right.items():
        path = tmp_path / f"{name}_ok.npy"
        np.save(path, np.zeros(n, dtype=dtype))
        plan_launch(k, params, block=(32, 1, 1), args=[f"{name}=@{path}"])
    raw = tmp_path / "bytes.npy"
    np.save(raw, np.zeros(64, dtype=np.uint8))
    plan_launch(k, params, block=(32, 1, 1), args=[f"x=@{raw}"])
    other = kernel([(0, 8)], "void k(Row*)")
    plan_launch(other, kernel_params(other, None), block=(32, 1, 1), args=[f"0=@{tmp_path}/x.npy"])


def test_buffers_from_files(tmp_path: Path) -> None:
    k = kernel([(0, 8), (8, 8)], "void k(unsigned int*, float*)")
    params = kernel_params(k, None)
    raw = tmp_path / "data.bin"
    raw.write_bytes(b"\x01\x02\x03")
    array = tmp_path / "data.npy"
    np.save(array, np.arange(4, dtype=np.float32))
    plan = plan_launch(k, params, block=(32, 1, 1), args=[f"0=@{raw}", f"1=@{array}"])
    memory = Memory()
    plan.param_bytes(memory)
    assert memory.buffers == [
        ("param0", b"\x01\x02\x03"),
        ("param1", np.arange(4, dtype=np.float32).tobytes()),
    ]
    assert plan.zero_filled == ()


def test_unknown_type_takes_8_byte_parameters_for_pointers() -> None:
    k = kernel([(0, 12), (16, 8)])  # extern "C": the signature holds no types
    plan = plan_launch(k, kernel_params(k, ["d", "out"]), block=(32, 1, 1), args=["d=1,2,3"])
    assert [b.param.name for b in plan.buffers] == ["out"]
    image = plan.param_bytes(Memory())
    assert image[:12] == struct.pack("<3i", 1, 2, 3)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["5=1"], "--arg 5: the kernel has 2 parameter(s), positions 0-1"),
        (["wA=1"], "--arg wA: no parameter of that name (names: out, n)"),
        (["n"], "--arg expects POSITION=VALUE or NAME=VALUE, got 'n'"),
        (["n=1", "1=2"], "--arg 1 (n) is given twice"),
        (["n=@x.bin"], "--arg 1 (n): @FILE is for pointer parameters; this one has 4 bytes"),
        (["out=@/nonexistent/x.bin"], "--arg 0 (out): cannot read /nonexistent/x.bin"),
    ],
)
def test_argument_errors(args: list[str], message: str) -> None:
    k = kernel([(0, 8), (8, 4)], "void k(float*, int)")
    with pytest.raises(ShmemError) as err:
        plan_launch(k, kernel_params(k, ["out", "n"]), block=(32, 1, 1), args=args)
    assert message in err.value.message


def test_param_table_of_a_real_cubin() -> None:
    info = read_cubin(DATA / "meta.sm_90.cubin")
    k = next(k for k in info.kernels if k.name == "tiled_copy<32, float>")
    rows = param_table(kernel_params(k, ["out", "in", "rows", "scale"]))
    assert rows == [
        ("0", "out", "float*", "0x0", "8"),
        ("1", "in", "float const*", "0x8", "8"),
        ("2", "rows", "int", "0x10", "4"),
        ("3", "scale", "float", "0x14", "4"),
    ]


def test_a_large_buffer_file_lands_in_the_emulators_memory_as_given(tmp_path: Path) -> None:
    # 2 MiB: past buffers.IN_PLACE_BYTES, read straight into the arena when it is handed over
    k = kernel([(0, 8)], "void k(unsigned char*)")
    data = np.random.default_rng(3).integers(0, 256, 2 << 20, dtype=np.uint8).tobytes()
    (tmp_path / "big.bin").write_bytes(data)
    plan = plan_launch(k, kernel_params(k, None), block=(32, 1, 1), args=[f"0=@{tmp_path}/big.bin"])
    (buf,) = plan.buffers
    assert buf.size == len(data) and buf.content is not None and not buf.content.taken
    memory = GlobalMemory()
    image = plan.param_bytes(memory)
    assert buf.content.taken
    assert struct.unpack("<Q", image[:8])[0] == memory.buffers[0].address
    assert memory.read("param0") == data


# --- shared memory of a block: the arch profile's per-block bound ---------------------------

H200_BLOCK = 227 * 1024  # 228 KiB per SM less the 1 KiB the driver reserves per block


def shared_kernel(static: int) -> Kernel:
    reserved = 1024  # sm_90's, in front of the kernel's own variables
    return Kernel("k", "k", "k()", (), 0x210, 0, static + reserved, reserved, 0, arch="sm_90")


def test_a_block_may_have_227_kib_of_shared_memory() -> None:
    plan = plan_launch(shared_kernel(0), [], block=(32, 1, 1), dynamic_smem=H200_BLOCK)
    assert plan.dynamic_smem == 232_448
    plan = plan_launch(shared_kernel(4096), [], block=(32, 1, 1), dynamic_smem=H200_BLOCK - 4096)
    assert plan.dynamic_smem == 228_352


def test_more_than_227_kib_for_one_block_is_refused_naming_the_figure() -> None:
    with pytest.raises(ShmemError) as err:
        plan_launch(shared_kernel(4096), [], block=(32, 1, 1), dynamic_smem=H200_BLOCK - 4095)
    said = str(err.value)
    assert (
        "error: --dynamic-smem: 228,353 bytes of dynamic shared memory and the kernel's 4,096"
        in said
    )
    assert "at most 232,448 bytes (227 KiB)" in said and "228 KiB per SM" in said
    assert "give at most 228,352 bytes of dynamic shared memory" in said


def test_a_cluster_of_full_blocks_is_not_refused_for_its_total() -> None:
    # 4 CTAs of 227 KiB each: 908 KiB in the cluster, each block within its own bound
    plan = plan_launch(
        shared_kernel(0),
        [],
        block=(32, 1, 1),
        grid=(4, 1, 1),
        cluster=(4, 1, 1),
        dynamic_smem=H200_BLOCK,
    )
    assert plan.dynamic_smem == H200_BLOCK and plan.cluster == (4, 1, 1)


def test_the_option_refuses_more_than_a_block_may_have_before_reading_the_kernel() -> None:
    from click.testing import CliRunner

    from shmem_cli.cli import main

    column = str(DATA / "column_read.sm_90.cubin")  # 4,096 B static
    over = CliRunner().invoke(main, ["trace", column, "--block", "32", "--dynamic-smem", "232449"])
    assert over.exit_code == 2 and "Traceback" not in over.output
    assert "more than 232,448 bytes: an sm_90 block has at most 232,448 bytes" in over.output
    with_static = CliRunner().invoke(
        main, ["trace", column, "--block", "32", "--dynamic-smem", "230000"]
    )
    assert with_static.exit_code == 2
    assert "give at most 228,352 bytes of dynamic shared memory" in with_static.output
    helped = CliRunner().invoke(main, ["trace", "--help"])
    assert "at most one block's: 232,448 bytes (227 KiB) on an sm_90" in " ".join(
        helped.output.split()
    )


@pytest.mark.parametrize(
    ("ctype", "size", "text", "want"),
    [
        ("float", 4, "1", struct.pack("<f", 1.0)),  # alpha=1 is 1.0, as C++ converts it
        ("float", 4, "true", struct.pack("<f", 1.0)),  # a bool too: true is 1.0f
        ("int", 4, "true", bytes.fromhex("01000000")),
        ("float", 4, "-3", struct.pack("<f", -3.0)),
        ("double", 8, "2", struct.pack("<d", 2.0)),
        ("__half", 2, "1", bytes.fromhex("003c")),  # IEEE half 1.0 = 0x3c00
        ("__nv_bfloat16", 2, "1", bytes.fromhex("803f")),  # bfloat16 1.0 = 0x3f80
        ("__nv_bfloat16", 2, "1.5", bytes.fromhex("c03f")),  # 0x3fc0
        ("__nv_bfloat16", 2, "1.00390625", bytes.fromhex("803f")),  # halfway: to even 0x3f80
        ("bfloat16", 2, "-2.5", bytes.fromhex("20c0")),  # Triton's spelling: 0xc020
        ("cutlass::bfloat16_t", 2, "1.5", bytes.fromhex("c03f")),  # CUTLASS's: not half 0x3e00
        ("c10::BFloat16", 2, "1", bytes.fromhex("803f")),  # PyTorch's
        ("cutlass::half_t", 2, "1", bytes.fromhex("003c")),
        ("c10::Half", 2, "-2", bytes.fromhex("00c0")),  # IEEE half -2.0 = 0xc000
        ("float", 4, "0x3f800000", bytes.fromhex("0000803f")),  # hex: the raw bits
        ("float", 4, "-0", bytes(4)),  # the int 0, converted: +0.0f, not -0.0f (0x80000000)
        ("double", 8, "-0", bytes(8)),
        ("__nv_bfloat16", 2, "-0", bytes(2)),
        ("int", 4, "1", bytes.fromhex("01000000")),
        (None, 4, "1", bytes.fromhex("01000000")),  # type unknown: an integer
    ],
)
def test_a_number_for_a_by_value_parameter_follows_its_type(
    ctype: str | None, size: int, text: str, want: bytes
) -> None:
    param = Param(0, 0, size, "alpha", ctype)
    assert value_bytes(text, param) == want


@pytest.mark.parametrize(
    ("written", "taken"),
    [
        ("const float", "float"),
        ("float const", "float"),
        ("constfloat", "constfloat"),
        (None, None),
    ],
)
def test_a_by_value_parameter_s_type_drops_only_the_word_const(
    written: str | None, taken: str | None
) -> None:
    assert Param(0, 0, 4, "x", written).value_type == taken


@pytest.mark.parametrize(
    ("ctype", "size", "text", "want"),
    [
        ("float2", 8, "1.5,2", struct.pack("<ff", 1.5, 2.0)),  # "2": 2.0f, as make_float2(1.5, 2)
        ("float2", 8, "0x3f800000, 1", struct.pack("<ff", 1.0, 1.0)),  # hex: the raw bits
        ("float1", 4, "2", struct.pack("<f", 2.0)),  # one component: one number
        ("float3", 12, "1,2,3", struct.pack("<fff", 1.0, 2.0, 3.0)),
        ("float4", 16, "1,2,3,4", struct.pack("<ffff", 1.0, 2.0, 3.0, 4.0)),
        ("double2", 16, "1,-0", struct.pack("<dd", 1.0, 0.0)),
        ("__half2", 4, "1,-2", bytes.fromhex("003c00c0")),  # IEEE half 0x3c00, 0xc000
        ("__nv_bfloat162", 4, "1,1.5", bytes.fromhex("803fc03f")),  # bfloat16 0x3f80, 0x3fc0
        ("int2", 8, "1,2", bytes.fromhex("0100000002000000")),  # integers stay integers
    ],
)
def test_a_vector_of_floats_takes_its_components_as_its_type_says(
    ctype: str, size: int, text: str, want: bytes
) -> None:
    param = Param(0, 0, size, "v", ctype)
    assert value_bytes(text, param) == want


@pytest.mark.parametrize(
    ("ctype", "size", "text", "message"),
    [
        # one number for a float2 filled its 8 bytes as a double
        ("float2", 8, "1.5", "is a float2: give its 2 component(s) as X,Y (each a float"),
        ("float4", 16, "1,2", "is a float4: give its 4 component(s) as X,Y,Z,W"),
        ("__half2", 4, "1", "is a __half2: give its 2 component(s) as X,Y (each a __half"),
        ("__half2", 4, "1,70000", "component y: 70000.0 does not fit in a 2-byte float"),
    ],
)
def test_a_vector_of_floats_given_otherwise_is_refused_naming_its_form(
    ctype: str, size: int, text: str, message: str
) -> None:
    with pytest.raises(ShmemError, match=re.escape(message)):
        value_bytes(text, Param(0, 0, size, "v", ctype))


def test_a_vector_of_floats_is_shown_as_its_components_are_taken() -> None:
    assert as_typed("1, 2", 8, "float2") == "1.0,2.0"
    assert as_typed("1", 8, "float2") == "1"  # refused when packed, shown as given
