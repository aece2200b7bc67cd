"""The SASS emulator runs small kernels of the project's own (tests/data/trace/kernels)
and must produce what NumPy computes for the same inputs; the shared-memory records
are then checked against what the source says each access does."""

from __future__ import annotations

import json
import struct
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from shmem_cli.hardware.arch import SM90
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.state import GlobalMemory, Launch, TraceError
from shmem_cli.trace.requests import InstructionRecords

from .conftest import TRACE_DATA as DATA
from .conftest import needs_nvdisasm
from .trace_util import functions

pytestmark = needs_nvdisasm

ARCHES = [("emu_basic_sm90.cubin", 0x210, 0x400), ("emu_basic_sm80.cubin", 0x160, 0)]


def launch(
    arch: tuple[str, int, int],
    block: tuple[int, int, int],
    params: bytes,
    mem: GlobalMemory,
    smem: int,
    dyn: int = 0,
    grid: tuple[int, int, int] = (1, 1, 1),
) -> Launch:
    _, base, reserved = arch
    return Launch(
        block=block,
        grid=grid,
        params=params,
        param_base=base,
        static_smem=smem,
        dynamic_smem=dyn,
        shared_base=reserved,
        memory=mem,
    )


def shared(trace: execute.Trace, op: str) -> list[InstructionRecords]:
    return [r for r in trace.records if r.kind.op == op]


@pytest.mark.parametrize("arch", ARCHES, ids=["sm90", "sm80"])
@pytest.mark.parametrize("pad", [0, 1])
def test_transpose_output_and_conflicts(arch: tuple[str, int, int], pad: int) -> None:
    fn = functions(arch[0])[f"_Z13emu_transposeILi{pad}EEvPKfPf"]
    mem = GlobalMemory()
    src = np.arange(1024, dtype=np.float32) * 0.5
    a_in = mem.add_buffer(src.tobytes(), "in")
    a_out = mem.add_buffer(4096, "out")
    tr = execute.run(
        fn, launch(arch, (32, 8, 1), struct.pack("<QQ", a_in, a_out), mem, 32 * (32 + pad) * 4)
    )
    out = np.frombuffer(mem.read("out"), dtype=np.float32).reshape(32, 32)
    np.testing.assert_array_equal(out, src.reshape(32, 32).T)
    loads = shared(tr, "load")
    assert sum(r.n for r in loads) == 8 * 4  # 8 warps x 4 row steps
    for r in loads:
        addr, active = r.rows(SM90)
        assert active.all()
        # lane x reads tile[x][y+j]: 32 lanes, one row (32 + pad floats) apart
        assert (np.diff(addr, axis=1) == 4 * (32 + pad)).all()
        st = r.stats(SM90)
        assert (st.wavefronts == (32 if pad == 0 else 1)).all()
        assert not r.data_dependent.any()
    for r in shared(tr, "store"):
        assert (r.stats(SM90).wavefronts == 1).all()


@pytest.mark.parametrize("arch", ARCHES, ids=["sm90", "sm80"])
def test_reduce_with_shuffles_over_a_grid(arch: tuple[str, int, int]) -> None:
    fn = functions(arch[0])["_Z10emu_reducePKfPfi"]
    mem = GlobalMemory()
    n = 1000
    x = (np.arange(n, dtype=np.float32) % 7) - 3.0
    a_in = mem.add_buffer(x.tobytes(), "in")
    a_out = mem.add_buffer(4 * 3, "out")
    tr = execute.run(
        fn,
        launch(
            arch, (128, 1, 1), struct.pack("<QQi", a_in, a_out, n), mem, 0, dyn=512, grid=(3, 1, 1)
        ),
        grid=True,
    )
    out = np.frombuffer(mem.read("out"), dtype=np.float32)
    per_block = [
        float(sum(x[i] for t in range(128) for i in range(b * 128 + t, n, 384))) for b in range(3)
    ]
    np.testing.assert_allclose(out, per_block, rtol=1e-5)
    assert tr.blocks == 3
    # the tree (k = 64, 32) runs for every block: loads of warps that have t < k
    warps = {int(w) for r in shared(tr, "load") for w in r.warp}
    assert warps == {0, 1, 4, 5, 8, 9}  # warp index counts across the grid


@pytest.mark.parametrize("arch", ARCHES, ids=["sm90", "sm80"])
def test_histogram_atomics_are_data_dependent(arch: tuple[str, int, int]) -> None:
    fn = functions(arch[0])["_Z13emu_histogramPKhiPj"]
    mem = GlobalMemory()
    data = ((np.arange(500) * 37) % 251).astype(np.uint8)
    a_data = mem.add_buffer(data.tobytes(), "data")
    a_bins = mem.add_buffer(64 * 4, "bins")
    tr = execute.run(
        fn, launch(arch, (96, 1, 1), struct.pack("<QiiQ", a_data, 500, 0, a_bins), mem, 256)
    )
    bins = np.frombuffer(mem.read("bins"), dtype=np.uint32)
    np.testing.assert_array_equal(bins, np.bincount(data & 63, minlength=64))
    atoms = shared(tr, "atomic")
    assert atoms and all(r.data_dependent[: r.n].all() for r in atoms)  # (rows past n: room)
    assert {r.kind.atomic for r in atoms} == {"inc"}
    assert not any(r.data_dependent[: r.n].any() for r in shared(tr, "store"))


@pytest.mark.parametrize("arch", ARCHES, ids=["sm90", "sm80"])
def test_scan(arch: tuple[str, int, int]) -> None:
    fn = functions(arch[0])["_Z8emu_scanPKiPi"]
    mem = GlobalMemory()
    x = (np.arange(256, dtype=np.int32) * 13) % 17 - 8
    a_in, a_out = mem.add_buffer(x.tobytes(), "in"), mem.add_buffer(1024, "out")
    execute.run(fn, launch(arch, (256, 1, 1), struct.pack("<QQ", a_in, a_out), mem, 2048))
    np.testing.assert_array_equal(np.frombuffer(mem.read("out"), dtype=np.int32), np.cumsum(x))


@pytest.mark.parametrize("arch", ARCHES, ids=["sm90", "sm80"])
def test_mixed_divergence_division_widths(arch: tuple[str, int, int]) -> None:
    fn = functions(arch[0])["_Z9emu_mixedPKiPK6float4PfPx4Pairi"]
    mem = GlobalMemory()
    idx = ((np.arange(64) * 29) % 97).astype(np.int32)
    vin = (np.arange(256, dtype=np.float32) * 0.25).reshape(64, 4)
    a_idx, a_vin = mem.add_buffer(idx.tobytes(), "idx"), mem.add_buffer(vin.tobytes(), "vin")
    a_out, a_wide = mem.add_buffer(128 * 4, "out"), mem.add_buffer(64 * 8, "wide")
    pa, pb, trips = 5, 1.5, 3
    params = struct.pack("<QQQQifi", a_idx, a_vin, a_out, a_wide, pa, pb, trips)
    execute.run(fn, launch(arch, (64, 1, 1), params, mem, 64 * 16 + 64 * 8 + 256 + 256))
    out = np.frombuffer(mem.read("out"), dtype=np.float32)
    t = np.arange(64)
    want = np.zeros(64, dtype=np.float32)
    for i in range(64):
        if i % 3 == 0:
            want[i] = sum(np.float32(vin[(i + k) % 64, 1]) for k in range(trips + i % 5))
        elif i % 3 == 1:
            want[i] = np.sqrt(np.float32(i)) + np.float32(i * pa) / np.float32(7.0)
        else:
            s16 = np.zeros(128, dtype=np.int16)
            s16[0::2], s16[1::2] = t - 40, 3 * t
            c8 = np.zeros(256, dtype=np.int8)
            c8[0::4] = (t * 7).astype(np.int8)
            want[i] = (
                np.float32(idx[i] % 64 * 0.5) + s16[(i * 5) % 128] - np.float32(c8[(i * 8) % 256])
            )
    np.testing.assert_allclose(out[:64], want + np.float32(pb), rtol=1e-6)
    np.testing.assert_array_equal(out[64:], (t // (pa + 1)) * 1000 + t % (pa + 1))
    wide = np.frombuffer(mem.read("wide"), dtype=np.int64)
    np.testing.assert_array_equal(wide, (t.astype(np.int64) * 0x100000001 - idx * 3) >> 3)


def test_shared_overrun_is_a_located_error() -> None:
    arch = ARCHES[0]
    fn = functions(arch[0])["_Z13emu_transposeILi0EEvPKfPf"]
    mem = GlobalMemory()
    a_in, a_out = mem.add_buffer(4096, "in"), mem.add_buffer(4096, "out")
    with pytest.raises(TraceError) as err:
        execute.run(fn, launch(arch, (32, 8, 1), struct.pack("<QQ", a_in, a_out), mem, 64))
    assert "outside the block's shared memory" in err.value.message
    assert err.value.path is not None and err.value.path.endswith("emu_basic.cu")


def test_global_overrun_names_the_buffer() -> None:
    arch = ARCHES[0]
    fn = functions(arch[0])["_Z13emu_transposeILi0EEvPKfPf"]
    mem = GlobalMemory()
    a_in, a_out = mem.add_buffer(1000, "in"), mem.add_buffer(4096, "out")
    with pytest.raises(TraceError, match="nearest buffer 'in'"):
        execute.run(fn, launch(arch, (32, 8, 1), struct.pack("<QQ", a_in, a_out), mem, 4096))


def test_sgemm_tile_product_and_broadcast_loads() -> None:
    fn = functions("emu_gemm_sm90.cubin")["_Z9emu_sgemmiiiPKfS0_Pf"]
    m = n = 64
    k = 32
    a = (np.arange(m * k) % 13 - 6).astype(np.float32).reshape(m, k)
    b = (np.arange(k * n) % 7 - 3).astype(np.float32).reshape(k, n)
    mem = GlobalMemory()
    pa, pb, pc = (
        mem.add_buffer(a.tobytes(), "A"),
        mem.add_buffer(b.tobytes(), "B"),
        mem.add_buffer(m * n * 4, "C"),
    )
    params = struct.pack("<iiiiQQQ", m, n, k, 0, pa, pb, pc)
    tr = execute.run(fn, launch(ARCHES[0], (256, 1, 1), params, mem, 4096))
    np.testing.assert_array_equal(
        np.frombuffer(mem.read("C"), dtype=np.float32).reshape(m, n), a @ b
    )
    loads = shared(tr, "load")
    assert {r.kind.size for r in loads} == {16}  # the compiler made float4 loads of As and Bs
    per_instruction = []
    for r in loads:
        assert r.n == 8 * (k // 8)  # 8 warps, once per k step of 8
        assert set(r.iteration[: r.n].tolist()) == set(range(k // 8))
        per_instruction.append(set(r.stats(SM90).wavefronts.tolist()))
    # As[kk][ty*4]: lanes 0-15 and 16-31 read one float4 each, the pairs merge: 2 wavefronts;
    # Bs[kk][tx*4]: 16 float4 read twice (lane n and n^16), no merging: 4 quarter-warp phases
    assert sorted(min(w) for w in per_instruction) == [2] * 8 + [4] * 8
    assert all(len(w) == 1 for w in per_instruction)


def _c_div(a: int, b: int) -> tuple[int, int]:
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q, a - q * b


MORE = [("emu_more_sm90.cubin", 0x210, 0x400), ("emu_more_sm80.cubin", 0x160, 0)]


@pytest.mark.parametrize("arch", MORE, ids=["sm90", "sm80"])
@pytest.mark.parametrize("divisor", [97, -1000])
def test_library_code_paths(arch: tuple[str, int, int], divisor: int) -> None:
    fn = functions(arch[0])["_Z11emu_libraryPKiPxPjPfx"]
    t = np.arange(128)
    v = ((t * 104729 + 12345) % 1000000).astype(np.int32)
    mem = GlobalMemory()
    a_in = mem.add_buffer(v.tobytes(), "in")
    a64, au, af = (
        mem.add_buffer(128 * 32, "o64"),
        mem.add_buffer(4 * 1040, "ou"),
        mem.add_buffer(128 * 16, "of"),
    )
    params = struct.pack("<QQQQq", a_in, a64, au, af, divisor)
    execute.run(fn, launch(arch, (128, 1, 1), params, mem, 64))
    o64 = np.frombuffer(mem.read("o64"), dtype=np.int64).reshape(128, 4)
    ou = np.frombuffer(mem.read("ou"), dtype=np.uint32)
    of = np.frombuffer(mem.read("of"), dtype=np.float32).reshape(128, 4)
    for i in range(128):
        big = int(v[i]) * 1000003 + i
        assert (int(o64[i, 0]), int(o64[i, 1])) == _c_div(big, divisor)
        ub = int(v[i]) * 77777
        assert int(o64[i, 2]) == ub // 13
        rev = int(f"{ub:064b}"[::-1], 2) ^ bin(ub).count("1")
        assert int(o64[i, 3]) == (rev - (1 << 64) if rev >> 63 else rev)
    x = (v % 1000).astype(np.float32) / np.float32(100)
    np.testing.assert_array_equal(of[:, 0], x / (t + 1).astype(np.float32))
    np.testing.assert_array_equal(of[:, 1], np.sqrt(x + np.float32(1)))
    np.testing.assert_array_equal(of[:, 2], np.maximum(x, 3.5) - np.minimum(x, 2.25))
    lo = x.astype(np.float16).astype(np.float32) ** 2 + 1
    hi = (-x * np.float32(0.5)).astype(np.float16).astype(np.float32) ** 2 + 1
    np.testing.assert_allclose(of[:, 3], lo + hi, rtol=2e-3)
    u = ou[: 128 * 8].reshape(128, 8)
    assert (u[:, 0] == (v & 1).sum()).all()
    assert (u[:, 1] == int((v > 900000).any())).all()
    lane = t % 32
    base = t - lane
    for i in range(128):
        w = slice(base[i], base[i] + 32)
        same = np.flatnonzero((v[w] & 3) == (v[i] & 3))
        assert u[i, 2] == sum(1 << int(k) for k in same)
        assert u[i, 3] == (v[w] & 255).sum()
        assert u[i, 4] == (v[w] & 1023).max()
        vi = int(v[i])
        clz = 32 - vi.bit_length()
        ffs = (vi & -vi).bit_length()
        assert u[i, 5] == clz + 100 * ffs
        assert u[i, 6] == (vi ^ (((vi >> 3) & 15) * 7)) + (vi ^ ((i & 15) * 7))
        up = base[i] + (lane[i] - 3 if lane[i] % 16 >= 3 else lane[i])
        idx = base[i] + (lane[i] & ~7) + ((31 - lane[i]) & 7)
        assert u[i, 7] == (int(v[up]) ^ int(v[idx]))
    assert ou[1024] == x.max().view(np.uint32)
    np.testing.assert_array_equal(ou[1025:1033], np.bincount(v & 7, minlength=8))


@pytest.mark.parametrize("arch", MORE, ids=["sm90", "sm80"])
@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_generic_pointers_into_shared_memory(arch: tuple[str, int, int], k: int) -> None:
    fn = functions(arch[0])["_Z11emu_genericPfi"]
    mem = GlobalMemory()
    a_out = mem.add_buffer(128 * 4, "out")
    tr = execute.run(fn, launch(arch, (64, 1, 1), struct.pack("<Qi", a_out, k), mem, 256))
    out = np.frombuffer(mem.read("out"), dtype=np.float32)
    t = np.arange(64)
    written = t.astype(np.float32)  # in shared memory (k & 2) or at out[64:]
    source = written if k & 1 else np.zeros(64, dtype=np.float32)
    if k & 1 and not k & 2:
        source = np.zeros(64, dtype=np.float32)  # s was never written
    np.testing.assert_array_equal(out[:64], source[t ^ k])
    ops = {r.kind.op for r in tr.records}
    assert ops == ({"store"} if k & 2 else set()) | ({"load"} if k & 1 else set())
    if arch[0] == "emu_more_sm90.cubin":
        # the H200 counts generic LD/ST that reach shared memory as shared requests
        measured = json.loads((DATA / "emu_measured.json").read_text())["emu_generic"][str(k)]
        for op, name in (("ld", "load"), ("st", "store")):
            recs = [r for r in tr.records if r.kind.op == name]
            stats = [r.stats(SM90) for r in recs]
            got = [sum(r.n for r in recs), sum(int(x.wavefronts.sum()) for x in stats)]
            assert got == measured[op], (op, got, measured[op])


ASYNC = [("emu_async_sm90.cubin", 0x210, 0x400), ("emu_async_sm80.cubin", 0x160, 0)]


@pytest.mark.parametrize("arch", ASYNC, ids=["sm90", "sm80"])
def test_cp_async_pipeline_ldmatrix_mma(arch: tuple[str, int, int]) -> None:
    fn = functions(arch[0])["_Z13emu_async_mmaPK6__halfPfii"]
    tiles, valid = 3, 13
    x = ((np.arange(tiles * 256) % 23) - 11).astype(np.float16) / np.float16(4)
    mem = GlobalMemory()
    a_in, a_out = mem.add_buffer(x.tobytes(), "in"), mem.add_buffer(tiles * 128 * 4, "out")
    params = struct.pack("<QQii", a_in, a_out, tiles, valid)
    tr = execute.run(fn, launch(arch, (32, 1, 1), params, mem, 1024))
    out = np.frombuffer(mem.read("out"), dtype=np.float32).reshape(tiles, 32, 4)
    lane = np.arange(32)
    g, q = lane // 4, lane % 4
    for t in range(tiles):
        tile = x[t * 256 : (t + 1) * 256].reshape(16, 16).astype(np.float64)
        tile[valid:] = 0  # zero-filled by cp.async
        d = tile @ tile[:, :8]
        want = np.stack([d[g, 2 * q], d[g, 2 * q + 1], d[g + 8, 2 * q], d[g + 8, 2 * q + 1]], 1)
        np.testing.assert_allclose(out[t], want, rtol=1e-6)
    ops = sorted({r.kind.op for r in tr.records if r.n})
    assert ops == ["cp_async", "ldmatrix"]  # the @!PT LDS fillers make no request
    copies = [r for r in tr.records if r.kind.op == "cp_async"]
    assert all(r.src_bytes is not None for r in copies)
    n_zero = sum(
        int((r.src_bytes[: r.n][r.active[: r.n]] == 0).sum())
        for r in copies
        if r.src_bytes is not None
    )
    assert n_zero == tiles * 2 * (16 - valid)  # two 16-byte chunks per zero-filled row


def test_bulk_copy_completes_its_mbarrier() -> None:
    fn = functions("emu_bulk_sm90a.cubin")["_Z8emu_bulkPKfPf"]
    mem = GlobalMemory()
    x = np.arange(256, dtype=np.float32) * 3
    a_in, a_out = mem.add_buffer(x.tobytes(), "in"), mem.add_buffer(1024, "out")
    tr = execute.run(fn, launch(ARCHES[0], (256, 1, 1), struct.pack("<QQ", a_in, a_out), mem, 1040))
    np.testing.assert_array_equal(
        np.frombuffer(mem.read("out"), dtype=np.float32), x[np.arange(256) ^ 1]
    )
    assert tr.not_modelled == []  # the copy and its mbarrier are emulated
    (copy,) = [r for r in tr.records if r.n and r.kind.op == "tma"]  # one per issuing warp
    assert copy.n == 1 and (copy.reads or "").startswith("bulk copy of 1,024 B into shared")
    (lds,) = [r for r in tr.records if r.n and r.kind.op != "tma"]
    assert lds.kind.op == "load" and lds.n == 8
    assert lds.data_dependent.sum() == 0  # the addresses are thread indices


def test_conversions_rounding_doubles_and_bit_ops() -> None:
    fn = functions("emu_conv_sm90.cubin")["_Z8emu_convPKfPKiPKdPj"]
    n = 64
    t = np.arange(n)
    xf = ((t - 32) * 0.75 + np.where(t % 4 == 0, 0.25, 0)).astype(np.float32)
    xf[5], xf[6] = 2.5, -3.5  # ties round to even
    xi = ((t * 2654435761) % (1 << 32)).astype(np.uint32).view(np.int32)
    xd = (t - 20) * 1.37 + 0.1
    mem = GlobalMemory()
    pf, pi = mem.add_buffer(xf.tobytes(), "f"), mem.add_buffer(xi.tobytes(), "i")
    pd, po = mem.add_buffer(xd.tobytes(), "d"), mem.add_buffer(n * 24 * 4, "out")
    execute.run(fn, launch(ARCHES[0], (n, 1, 1), struct.pack("<QQQQ", pf, pi, pd, po), mem, 0))
    o = np.frombuffer(mem.read("out"), dtype=np.uint32).reshape(n, 24)

    def u(x: object) -> np.ndarray[Any, Any]:
        return np.asarray(x).astype(np.int64).astype(np.uint32)

    np.testing.assert_array_equal(o[:, 0], u(np.floor(xf)))
    np.testing.assert_array_equal(o[:, 1], u(np.ceil(xf)))
    np.testing.assert_array_equal(o[:, 2], u(np.rint(xf)))
    np.testing.assert_array_equal(o[:, 3], u(np.trunc(xf)))
    for col, fn_ in zip((4, 5, 6, 7), (np.floor, np.ceil, np.trunc, np.rint), strict=True):
        np.testing.assert_array_equal(o[:, col], fn_(xf).astype(np.float32).view(np.uint32))
    np.testing.assert_array_equal(o[:, 8], u(xi.astype(np.int8)))
    np.testing.assert_array_equal(o[:, 9], u((xi >> 3).astype(np.int16)))
    for k in range(n):
        x, s = int(xi[k]) & 0xFFFFFFFF, k & 0x7777
        both = (0x12345678 << 32) | x
        perm = sum(((both >> (8 * ((s >> (4 * j)) & 7))) & 0xFF) << (8 * j) for j in range(4))
        assert o[k, 10] == perm
        wide = (0xDEADBEEF << 32) | x
        assert o[k, 11] == ((wide << (k & 31)) >> 32) & 0xFFFFFFFF
        assert o[k, 12] == (wide >> (k & 31)) & 0xFFFFFFFF
        assert o[k, 13] == max(int(xi[k]), k * 1000 - 50000) & 0xFFFFFFFF
        assert o[k, 14] == min(x, k * 77777)
        assert o[k, 15] == (x * 0x9E3779B9) >> 32
        m = (int(xi[k]) * 12345 * -987654321987) >> 64
        assert (int(o[k, 16]) | int(o[k, 17]) << 32) == m & 0xFFFFFFFFFFFFFFFF
        d = Fraction(float(xd[k]))
        e = float(d * Fraction(3, 2) + int(xi[k]))  # nvcc contracts d * 1.5 + i into a DFMA
        e = float(Fraction(e) * d - Fraction(13, 4))
        assert (int(o[k, 18]) | int(o[k, 19]) << 32) == int(np.float64(e).view(np.uint64))
        assert o[k, 20] == np.float32(e).view(np.uint32)
        assert o[k, 21] == int(float(xd[k]) < float(xf[k]))
        big = int(np.float32(xf[k]) * np.float32(1e6))
        assert o[k, 22] == np.float32(big).view(np.uint32)
        assert o[k, 23] == int(xd[k]) & 0xFFFFFFFF


def test_imma_int8_mma() -> None:
    # the fragment layout below is PTX's; the same kernel and inputs gave this output on
    # the H200 too (tests/data/trace/emu_measured.json)
    fn = functions("emu_imma_sm90.cubin")["_Z8emu_immaPKjS0_Pi"]
    rng = np.random.default_rng(5)
    a = rng.integers(-128, 128, size=(16, 32))
    b = rng.integers(-128, 128, size=(32, 8))
    lane = np.arange(32)
    g, q = lane // 4, lane % 4
    # pack the fragments the way the kernel expects them (PTX layout for m16n8k32 .s8)
    afrag = np.zeros((32, 4), dtype=np.uint32)
    for r in range(4):
        row, col = g + 8 * (r % 2), 4 * q + 16 * (r // 2)
        for j in range(4):
            afrag[:, r] |= (a[row, col + j] & 0xFF).astype(np.uint32) << np.uint32(8 * j)
    bfrag = np.zeros((32, 2), dtype=np.uint32)
    for r in range(2):
        for j in range(4):
            bfrag[:, r] |= (b[4 * q + j + 16 * r, g] & 0xFF).astype(np.uint32) << np.uint32(8 * j)
    mem = GlobalMemory()
    pa, pb = mem.add_buffer(afrag.tobytes(), "a"), mem.add_buffer(bfrag.tobytes(), "b")
    pd = mem.add_buffer(32 * 16, "d")
    execute.run(fn, launch(ARCHES[0], (32, 1, 1), struct.pack("<QQQ", pa, pb, pd), mem, 0))
    got = np.frombuffer(mem.read("d"), dtype=np.int32).reshape(32, 4)
    prod = a @ b
    want = np.stack(
        [
            prod[g, 2 * q] + lane,
            prod[g, 2 * q + 1] - lane,
            prod[g + 8, 2 * q] + 7,
            prod[g + 8, 2 * q + 1],
        ],
        1,
    )
    np.testing.assert_array_equal(got, want)


# A hand-written function: every thread stores its id into shared memory and exits; the
# instruction after the EXIT (FOOBAR, which no GPU has) is on a path no thread takes, the
# way CUB's warp-collective fallbacks sit behind BRA.DIV.
DEAD_PATH_SASS = """
        .section        .text.dead_path,"ax",@progbits
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   S2UR UR4, SR_CgaCtaId ;
        /*0020*/                   UMOV UR5, 0x400 ;
        /*0030*/                   ULEA UR4, UR4, UR5, 0x18 ;
        /*0040*/                   LEA R2, R0, UR4, 0x2 ;
        /*0050*/                   STS [R2], R0 ;
        /*0060*/                   EXIT ;
        /*0070*/                   FOOBAR R3, R0 ;
        /*0080*/                   EXIT ;
"""


def _dead_path_function(reached: bool) -> Any:
    from shmem_cli.cuda.sass import parse

    text = DEAD_PATH_SASS
    if reached:  # without the first EXIT every thread runs FOOBAR
        text = text.replace("/*0060*/                   EXIT ;", "/*0060*/                   NOP ;")
    return parse(text)[0]


def test_an_unknown_instruction_on_a_path_never_taken_does_not_stop_the_trace() -> None:
    mem = GlobalMemory()
    trace = execute.run(_dead_path_function(False), launch(ARCHES[0], (64, 1, 1), b"", mem, 256))
    stores = shared(trace, "store")
    assert len(stores) == 1 and stores[0].n == 2  # one request per warp
    assert stores[0].addr[: stores[0].n, 5].tolist() == [0x400 + 4 * 5, 0x400 + 4 * 37]


def test_an_unknown_instruction_that_runs_is_a_located_error() -> None:
    mem = GlobalMemory()
    with pytest.raises(TraceError, match="instruction FOOBAR is not modelled"):
        execute.run(_dead_path_function(True), launch(ARCHES[0], (64, 1, 1), b"", mem, 256))


def _fp8_value(byte: int, exp_bits: int) -> float:
    """Reference: the value of an 8-bit float (E5M2: bias 15; E4M3: bias 7), not a NaN."""
    man_bits = 7 - exp_bits
    bias = 2 ** (exp_bits - 1) - 1
    e, m = (byte >> man_bits) & (2**exp_bits - 1), byte & (2**man_bits - 1)
    if exp_bits == 5 and e == 31:
        mag = float("inf")
    elif e == 0:
        mag = m / 2**man_bits * 2.0 ** (1 - bias)
    else:
        mag = (1 + m / 2**man_bits) * 2.0 ** (e - bias)
    return -mag if byte & 0x80 else mag


def test_fp8_pairs_unpack_to_halves() -> None:
    # F2FP.F16.E5M2.UNPACK_B / .E4M3 (Triton's fp8 dots on mma.sync): each thread unpacks
    # both halves of its word; 128 threads see every byte in both places of a pair (the H200
    # unpacked every 16-bit pattern so: tests/data/trace/emu_measured.json)
    fn = functions("emu_fp8_sm90.cubin")["_Z7emu_fp8PKjPj"]
    n = 128
    words = np.array(
        [t | (t + 128) << 8 | (255 - t) << 16 | (127 - t) << 24 for t in range(n)],
        dtype=np.uint32,
    )
    mem = GlobalMemory()
    pi, po = mem.add_buffer(words.tobytes(), "in"), mem.add_buffer(n * 16, "out")
    execute.run(fn, launch(ARCHES[0], (n, 1, 1), struct.pack("<QQ", pi, po), mem, 0))
    o = np.frombuffer(mem.read("out"), dtype=np.uint32).reshape(n, 4)
    halves = json.loads((DATA / "emu_measured.json").read_text())["emu_fp8_halves"]
    for t in range(n):
        w = int(words[t])
        for col, (half, exp_bits) in enumerate(((0, 5), (16, 5), (0, 4), (16, 4))):
            for k in (0, 1):
                byte = (w >> (half + 8 * k)) & 0xFF
                got = (int(o[t, col]) >> (16 * k)) & 0xFFFF
                nan = (exp_bits == 5 and byte & 0x7C == 0x7C and byte & 3) or (
                    exp_bits == 4 and byte & 0x7F == 0x7F
                )
                # what the H200 gave for that byte (NaNs as 0x7FFF), and for every other
                # byte the reference value above
                assert got == halves["E5M2" if exp_bits == 5 else "E4M3"][byte]
                if not nan:
                    want = np.array(_fp8_value(byte, exp_bits), dtype=np.float16)
                    assert got == int(want.view(np.uint16)), (t, col, k, hex(byte))


@pytest.mark.parametrize(
    ("operand", "mode", "want"),
    [
        ("-c[0x3][0x0]", "DADD", 3.0 - 1.5),  # a double constant negated
        ("|c[0x3][0x8]|", "DADD", 3.0 + 2.0),  # its absolute value
        ("-|c[0x3][0x0]|", "DMUL", 3.0 * -1.5),
        ("c[0x3][0x8]", "DMUL", 3.0 * -2.0),  # unmodified
    ],
)
def test_a_64_bit_constant_operand_takes_its_modifiers(
    operand: str, mode: str, want: float
) -> None:
    """``DADD R4, R2, -c[0x3][0x0]``: a double read from a constant bank with ``-`` or
    ``|..|`` (it was read as written, the modifier dropped, where a 4-byte constant and a
    register pair took theirs)."""
    from shmem_cli.cuda.sass import Function, parse_instruction
    from shmem_cli.trace.emulator.decode import decode_function
    from shmem_cli.trace.emulator.state import Block

    ins = parse_instruction(f"{mode} R4, R2, {operand}", 0, "k.cu", 1)
    program = decode_function(Function("k", [ins], {}))
    launch = Launch(
        block=(32, 1, 1), grid=(1, 1, 1), const_banks={3: struct.pack("<dd", 1.5, -2.0)}
    )
    blk = Block(launch, registers=8)
    three = struct.unpack("<II", struct.pack("<d", 3.0))
    blk.r[2], blk.r[3] = three
    blk.run_wide(program[0], np.ones(32, dtype=bool))
    got = (blk.r[4].astype(np.uint64) | (blk.r[5].astype(np.uint64) << np.uint64(32))).view(
        np.float64
    )
    assert (got == want).all(), got[:2]
