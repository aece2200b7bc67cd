"""Fuzz targets for the readers of inputs anyone can commit (issue 28): cubins, fat binaries
inside a host ELF, ``.npy`` buffers, ``--compare`` CSVs, Triton metadata and TTGIR.

Each target starts from a real input of the project's own and changes it: bytes flipped,
cut, repeated or overwritten with the values that break readers (0, 2^32 - 1, 2^63, lengths
past the end), fields of the metadata replaced by values of every type, TTGIR and CSV text
spliced. The only outcomes allowed are a result or a :class:`ShmemError` with a short
message: never another exception, a hang (:data:`~tests.conftest.HANG_S` an input, a
liveness guard, not a speed target) or a traceback.
``make fuzz`` runs every target for ``FUZZ_SECONDS``; ``make test`` for one second each.
"""

from __future__ import annotations

import atexit
import json
import shutil
import struct
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.kernel.binary_formats.fatbin import FATBIN_MAGIC, cubins_for_arch
from shmem_cli.trace.kernel.buffers import npy_data
from shmem_cli.trace.kernel.cubin import find_kernel, read_cubin
from shmem_cli.trace.ncu.exports import read_ncu_csv
from shmem_cli.trace.triton.cache import TritonEntry
from shmem_cli.trace.triton.metadata import read_metadata
from shmem_cli.trace.triton.ttgir import tensor_shapes, ttgir_params

from ..conftest import HANG_S, TEST_DATA
from .harness import remember, run_for

FUZZ = settings(database=None, deadline=None, suppress_health_check=list(HealthCheck))
MESSAGE_LIMIT = 600

CUBIN = (TEST_DATA / "hostile" / "hostile.sm_90.cubin").read_bytes()
ENTRY = TEST_DATA / "triton" / "cache" / "UIAVWYKFMI46K2QIXDERSSIUTU46SKZUSQ6O7N3QILUNPZ6GU44A"
METADATA = json.loads((ENTRY / "matmul_tiles.json").read_text())
TTGIR = (ENTRY / "matmul_tiles.ttgir").read_text()
CSV = (TEST_DATA / "triton" / "ncu" / "layernorm.csv").read_text()[:20_000]
NPY_HEADER = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 2), }"

_FOLDER = Path(tempfile.mkdtemp(prefix="shmem-fuzz-readers-"))
atexit.register(shutil.rmtree, _FOLDER, True)

NASTY = [0, 1, 7, 16, 32, 64, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 1 << 40, (1 << 64) - 1]


def _file(name: str, data: bytes) -> Path:
    path = _FOLDER / name
    path.write_bytes(data)
    return path


def _allowed(call: Any) -> Any:
    """Run ``call``: a result, or a ShmemError with a short one-line-per-problem message."""
    start = time.monotonic()
    try:
        return call()
    except ShmemError as exc:
        for one in exc.all:
            assert len(one.render_one()) <= MESSAGE_LIMIT, one.render_one()[:300]
        return None
    finally:
        assert time.monotonic() - start < HANG_S


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    """``seed`` with a few changes: words overwritten with edge values, bytes flipped, a cut,
    a slice repeated."""
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["word", "qword", "flip", "cut", "repeat"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "word" and at + 4 <= len(data):
            struct.pack_into("<I", data, at, draw(st.sampled_from(NASTY)) & 0xFFFFFFFF)
        elif kind == "qword" and at + 8 <= len(data):
            struct.pack_into("<Q", data, at, draw(st.sampled_from(NASTY)))
        elif kind == "flip" and data:
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "cut":
            del data[at:]
        elif kind == "repeat":
            size = draw(st.integers(1, 64))
            data[at:at] = data[at : at + size] * draw(st.integers(1, 8))
    return bytes(data)


# the ELF header fields a cubin reader trusts most: section table offset, entry size, count
ELF_FIELDS = [(0x28, "<Q"), (0x3A, "<H"), (0x3C, "<H"), (0x3E, "<H")]


@st.composite
def cubin_bytes(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(mutated(CUBIN)))
    if draw(st.booleans()) and len(data) >= 64:
        at, form = draw(st.sampled_from(ELF_FIELDS))
        value = draw(st.sampled_from(NASTY)) & ((1 << (8 * struct.calcsize(form))) - 1)
        struct.pack_into(form, data, at, value)
    return bytes(data)


@FUZZ
@given(cubin_bytes())
def cubin_target(data: bytes) -> None:
    remember(data[:64])
    path = _file("k.cubin", data)
    info = _allowed(lambda: read_cubin(path, use_tools=False))
    if info is not None and info.kernels:
        _allowed(lambda: find_kernel(info, info.kernels[0].name))


def _host(section: bytes) -> bytes:
    names = b"\0.nv_fatbin\0.shstrtab\0"
    names_at = 64 + len(section)
    sh_at = names_at + len(names)
    sh_at += -sh_at % 8
    head = bytearray(64)
    head[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", head, 0x28, sh_at)
    struct.pack_into("<HHH", head, 0x3A, 64, 3, 2)
    sections = bytes(64)
    sections += struct.pack("<IIQQQQ", 1, 1, 0, 0, 64, len(section)) + bytes(24)
    sections += struct.pack("<IIQQQQ", 12, 3, 0, 0, names_at, len(names)) + bytes(24)
    body = bytes(head) + section + names
    return body + bytes(sh_at - len(body)) + sections


def _entry(kind: int, arch: int, payload: bytes) -> bytes:
    header = bytearray(64)
    struct.pack_into("<HHIQ", header, 0, kind, 0x101, 64, len(payload))
    struct.pack_into("<I", header, 28, arch)
    return bytes(header) + payload


FATBIN = (lambda e: struct.pack("<IHHQ", FATBIN_MAGIC, 1, 16, len(e)) + e)(
    _entry(2, 90, CUBIN[:2048]) + _entry(1, 90, b"// ptx") + _entry(2, 80, CUBIN[:512])
)


@FUZZ
@given(mutated(_host(FATBIN)))
def fatbin_target(data: bytes) -> None:
    remember(data[:128])
    start = time.monotonic()
    found = cubins_for_arch(data, "sm_90")  # never an exception: garbage holds no cubin
    assert time.monotonic() - start < HANG_S
    assert sum(len(c) for c in found) <= len(data)


def _npy(header: str) -> bytes:
    text = header + " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode() + bytes(32)


npy_headers = st.one_of(
    st.just(NPY_HEADER),
    st.builds(
        "{{'descr': {!r}, 'fortran_order': {}, 'shape': {}, }}".format,
        st.sampled_from(["<f4", "|O", "<U3", "V0", "<i8", ">f2", "x", ""]),
        st.sampled_from(["False", "True", "0", "None"]),
        st.sampled_from(["(4, 2)", "(2199023255552,)", "()", "(-1,)", "(0,)", "'x'", "(8,)"]),
    ),
    st.text(max_size=80),
)


@FUZZ
@given(st.one_of(npy_headers.map(_npy), npy_headers.map(_npy).flatmap(mutated)))
def npy_target(data: bytes) -> None:
    remember(data[:200])
    _allowed(lambda: npy_data(data, "--arg 0"))


csv_fields = st.one_of(
    st.sampled_from(["1e309", "nan", "-1", "1,024", "0x10", "", '"', "\r", "9" * 40]),
    st.text(max_size=12),
)


@st.composite
def csv_text(draw: st.DrawFn) -> bytes:
    lines = CSV.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(lines) - 1))
        fields = lines[at].rstrip("\r\n").split(",")
        if fields:
            fields[draw(st.integers(0, len(fields) - 1))] = draw(csv_fields)
        lines[at] = ",".join(fields) + draw(st.sampled_from(["\n", "\r\n", "\r", ""]))
    return draw(mutated("".join(lines).encode()))


@FUZZ
@given(csv_text())
def csv_target(data: bytes) -> None:
    remember(data[:300])
    path = _file("ncu.csv", data)
    _allowed(lambda: read_ncu_csv(path))
    _allowed(lambda: read_ncu_csv(path, lambda name: name == "layernorm_rows"))


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(),
        st.text(max_size=10),
        st.sampled_from([0, 1, 32, 2**40, 10**30, "32", [65536] * 3, [4, 4, 4]]),
    ),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
META_KEYS = ["num_warps", "warp_size", "shared", "num_ctas", "cluster_dims", "name", "target",
             "num_stages", "global_scratch_size", "profile_scratch_size", "constants"]  # fmt: skip


@st.composite
def metadata(draw: st.DrawFn) -> bytes:
    meta = dict(METADATA)
    for _ in range(draw(st.integers(1, 3))):
        meta[draw(st.sampled_from(META_KEYS))] = draw(json_values)
    text = json.dumps(meta)
    return draw(st.one_of(st.just(text.encode()), mutated(text.encode())))


@FUZZ
@given(metadata())
def metadata_target(data: bytes) -> None:
    remember(data[:300])
    path = _file("matmul_tiles.json", data)
    meta = _allowed(lambda: read_metadata(path))
    if meta is not None:  # every property a launch reads, on what the check let through
        entry = TritonEntry(_FOLDER, str(meta["name"]), path, meta, (), ())
        assert entry.block[0] <= 1024 and 0 <= entry.shared <= 1 << 20
        assert max(entry.cluster_dims) <= 16
        (entry.arch, entry.num_stages, entry.describe(), entry.scratch_bytes("global_scratch"))


TTGIR_PIECES = ["tensor<", "1x", "(", ")", "%arg0: ", "!tt.ptr<", ">", " loc(", '"', "\n",
                "!tt.tensordesc<tensor<64x", "tt.func public @matmul_tiles(", " " * 64]  # fmt: skip


@st.composite
def ttgir_text(draw: st.DrawFn) -> str:
    text = TTGIR[:6000]
    for _ in range(draw(st.integers(1, 5))):
        at = draw(st.integers(0, len(text)))
        piece = draw(st.sampled_from(TTGIR_PIECES)) * draw(st.integers(1, 200))
        cut = draw(st.integers(0, 40))
        text = text[:at] + piece + text[at + cut :]
    return text


@FUZZ
@given(ttgir_text())
def ttgir_target(text: str) -> None:
    remember(text[:300])
    _allowed(lambda: ttgir_params(text, "matmul_tiles", Path("k.ttgir")))
    start = time.monotonic()
    tensor_shapes(text)
    assert time.monotonic() - start < HANG_S


def test_fuzz_cubins(fuzz_seconds: float) -> None:
    assert run_for(cubin_target, fuzz_seconds, "cubins") > 0


def test_fuzz_fat_binaries(fuzz_seconds: float) -> None:
    assert run_for(fatbin_target, fuzz_seconds, "fat binaries") > 0


def test_fuzz_npy(fuzz_seconds: float) -> None:
    assert run_for(npy_target, fuzz_seconds, ".npy buffers") > 0


def test_fuzz_csv(fuzz_seconds: float) -> None:
    assert run_for(csv_target, fuzz_seconds, "--compare CSVs") > 0


def test_fuzz_triton_metadata(fuzz_seconds: float) -> None:
    assert run_for(metadata_target, fuzz_seconds, "Triton metadata") > 0


def test_fuzz_ttgir(fuzz_seconds: float) -> None:
    assert run_for(ttgir_target, fuzz_seconds, "TTGIR") > 0
