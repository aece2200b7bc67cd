"""Fuzz targets for the launch inputs added after the first round (issue 28): tensor-map
arguments (``tensormap:``) and the 128 bytes of a ``CUtensorMap`` (from ``--params`` or a
dumped map), Triton's ``tensordesc:`` arguments, ``--const`` values and a parameter block's
tensor maps, ``--memory`` ranges (preloaded into global memory and read back), and the
cluster attribute of a cubin (``EIATTR_CTA_PER_CLUSTER``).

As in :mod:`.test_fuzz_readers`: the only outcomes allowed are a result or a
:class:`ShmemError` with a short message, never a hang (HANG_S an input). A map that decodes
and passes its checks must encode again (to the same bytes where the driver's fields are
all it holds).
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from shmem_cli.cuda.launch import tensormap
from shmem_cli.cuda.launch.files import MAX_FILE_BYTES
from shmem_cli.cuda.sass import Instruction
from shmem_cli.trace.emulator.global_memory import MAX_ADDRESS, NULL_PAGE, GlobalMemory
from shmem_cli.trace.kernel.constants import Constants, ConstSymbol, set_constants
from shmem_cli.trace.kernel.cubin import read_cubin
from shmem_cli.trace.kernel.launch import launch_cluster
from shmem_cli.trace.kernel.param_block import read_memory, tensor_maps_in
from shmem_cli.trace.triton import descriptors

from ..conftest import TEST_DATA
from .harness import remember, run_for
from .test_fuzz_readers import FUZZ, NASTY, _allowed, _file, mutated

INS = Instruction(0x40, None, "LDG", ("E",), (), "k.cu", 7, "LDG.E R0, [R2.64]")
CUBIN2 = (TEST_DATA / "hostile" / "hostile2.sm_90.cubin").read_bytes()
CLUSTER = b"\x04\x3d\x0c\x00" + struct.pack("<III", 2, 1, 1)
GOOD_MAP = tensormap.encode(
    tensormap.TensorMap(0x7F0000000000, "float16", (128, 64), (256,), (64, 32), (1, 1), 128)
)

numbers = st.one_of(
    st.sampled_from(["0", "1", "16", "256", "-1", "4294967296", "1_0", "0x10", "1e3", "", " "]),
    st.integers(-(1 << 70), 1 << 70).map(str),
    st.text(alphabet="0123456789x_-+ .\uff11", max_size=24),
)
sizes = st.lists(numbers, min_size=0, max_size=7).map("x".join)
words = st.sampled_from(
    ["dtype", "dims", "strides", "box", "elem", "swizzle", "l2", "oob", "data", "shape", "pad"]
)
values = st.one_of(sizes, st.sampled_from(["u8", "bf16", "f32", "tf32", "128B", "nan", "@x"]))
fields = st.lists(st.tuples(words, values).map("=".join), max_size=9).map(",".join)


@FUZZ
@given(fields)
def tensormap_text_target(text: str) -> None:
    remember(text)
    spec = _allowed(lambda: tensormap.parse_spec(tensormap.PREFIX + text))
    if spec is not None:  # a map that passed its checks encodes
        assert len(tensormap.encode(spec.map)) == tensormap.BYTES


@st.composite
def map_bytes(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(mutated(GOOD_MAP)).ljust(128, b"\0")[:128])
    for _ in range(draw(st.integers(0, 4))):
        at = 4 * draw(st.integers(0, 31))
        struct.pack_into("<I", data, at, draw(st.sampled_from(NASTY)) & 0xFFFFFFFF)
    return bytes(data)


@FUZZ
@given(map_bytes())
def tensormap_bytes_target(raw: bytes) -> None:
    remember(raw)

    def decoded() -> Any:
        tm = tensormap.decode(raw)
        if tm is not None:
            tm.check()
            tensormap.encode(tm)  # what passed its checks encodes again
            tensormap.describe(tm)
        return tm

    _allowed(decoded)
    found = tensor_maps_in(raw * 3, 0)  # the maps a parameter block holds: never an error
    assert all(tm.address and tm.address % 16 == 0 for _, tm in found)


@FUZZ
@given(
    st.lists(st.tuples(st.sampled_from(["shape", "strides", "padding", "x"]), values), max_size=5)
)
def tensordesc_target(parts: list[tuple[str, str]]) -> None:
    text = descriptors.PREFIX + ",".join(f"{k}={v}" for k, v in parts)
    remember(text)
    got = _allowed(lambda: descriptors.parse(text, "a_desc"))
    if got is not None:
        for key in ("shape", "strides"):
            assert 1 <= len(got[key]) <= 5
            assert all(1 <= v <= 1 << 32 for v in got[key])
        assert max(got["shape"]) < 1 << 31


CONSTANTS = Constants(
    banks={3: bytes(512)},
    symbols=(ConstSymbol("table", 3, 0, 256), ConstSymbol("ns::scale", 3, 256, 8)),
    unset=frozenset({"table", "ns::scale"}),
    types={"table": "int", "ns::scale": "double"},
)
const_values = st.one_of(
    st.lists(numbers, max_size=80).map(",".join),
    st.builds("{}:{}".format, st.sampled_from(["float", "half", "int8_t", "bool", "x"]), sizes),
    st.sampled_from(["@", "@/dev/zero", "@.", "nan", "inf,-inf", "1e999"]),
)


@FUZZ
@given(
    st.lists(
        st.tuples(st.sampled_from(["table", "scale", "ns::scale", "x y", ""]), const_values),
        max_size=3,
    )
)
def const_target(pairs: list[tuple[str, str]]) -> None:
    texts = [f"{name}={value}" for name, value in pairs]
    remember(texts)
    done = _allowed(lambda: set_constants(CONSTANTS, texts))
    if done is not None:
        assert {k: len(v) for k, v in done.banks.items()} == {3: 512}  # nothing grew


addresses = st.one_of(
    st.integers(-(1 << 65), 1 << 65)
    .map(lambda a: st.sampled_from([f"{a}", f"{a:#x}"]))
    .flatmap(lambda s: s),
    st.integers(0, 1 << 49).map(lambda a: f"{a:#x}"),
    st.sampled_from(["0x10000", "0x1_0000", "0b1", "0o777777", "", "0x", "\u0661", "1e6"]),
)
memory_values = st.one_of(
    const_values,
    st.builds("{}:{}".format, st.sampled_from(["uint64_t", "double", "char", "short"]), sizes),
    st.sampled_from(["@" + str(_file("m.bin", bytes(range(256)) * 300)), "@/dev/null"]),
)


@FUZZ
@given(st.lists(st.tuples(addresses, memory_values).map("=".join), max_size=4))
def memory_target(texts: list[str]) -> None:
    remember(texts)
    ranges = _allowed(lambda: read_memory(texts))
    if ranges is None:
        return
    assert sum(len(r.data) for r in ranges) <= MAX_FILE_BYTES
    for a, b in zip(ranges, ranges[1:], strict=False):
        assert a.end <= b.address  # sorted, none overlapping
    memory = GlobalMemory()
    for r in ranges:  # each lands where it is said to, read back as given
        assert r.address >= NULL_PAGE and r.end <= MAX_ADDRESS
        memory.preload(r.address, r.data, "--memory")
        off = memory.offsets(np.array([r.address], dtype=np.int64), 1, INS)[0]
        assert memory.data[off : off + len(r.data)].tobytes() == r.data
        assert not memory.untouched_taint(off + np.arange(len(r.data)), 1).any()


@FUZZ
@given(
    st.tuples(*[st.sampled_from([0, 1, 2, 3, 16, 17, 0xFFFFFFFF, 1 << 20])] * 3),
    st.tuples(*[st.sampled_from([1, 2, 16, 4096, 65535, (1 << 31) - 1])] * 3),
    st.sampled_from([None, (1, 1, 1), (2, 1, 1), (16, 1, 1), (4, 4, 1)]),
)
def cluster_target(
    dims: tuple[int, int, int], grid: tuple[int, int, int], given_: tuple[int, int, int] | None
) -> None:
    remember((dims, grid, given_))
    path = _file("cluster.cubin", CUBIN2.replace(CLUSTER, CLUSTER[:4] + struct.pack("<III", *dims)))
    info = read_cubin(path, use_tools=False)
    kernel = next(k for k in info.kernels if "clustered" in k.mangled)
    shape = _allowed(lambda: launch_cluster(kernel, grid, given_))
    if shape is not None:
        assert 1 <= shape[0] * shape[1] * shape[2] <= 16
        assert all(g % c == 0 for g, c in zip(grid, shape, strict=True))


def test_fuzz_tensormap_texts(fuzz_seconds: float) -> None:
    assert run_for(tensormap_text_target, fuzz_seconds, "tensormap: texts") > 0


def test_fuzz_tensormap_bytes(fuzz_seconds: float) -> None:
    assert run_for(tensormap_bytes_target, fuzz_seconds, "CUtensorMap bytes") > 0


def test_fuzz_tensordesc(fuzz_seconds: float) -> None:
    assert run_for(tensordesc_target, fuzz_seconds, "tensordesc: texts") > 0


def test_fuzz_const_values(fuzz_seconds: float) -> None:
    assert run_for(const_target, fuzz_seconds, "--const values") > 0


def test_fuzz_memory_ranges(fuzz_seconds: float) -> None:
    assert run_for(memory_target, fuzz_seconds, "--memory ranges") > 0


def test_fuzz_cluster_attributes(fuzz_seconds: float) -> None:
    assert run_for(cluster_target, fuzz_seconds, "cluster attributes") > 0
