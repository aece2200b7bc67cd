"""The instructions and modifiers Triton emits for sm_90 that the emulator first did not run
(issue 27), on the project's own Triton kernels (tests/data/trace/opcodes_tri: kernels.py,
compiled by build.py with Triton 3.6.0 and 3.2.0): every buffer of every launch against the
one the H200 wrote (outputs/, each launch run twice there, both runs the same), and the
NumPy references written from PTX's definitions that came before them.

- UP2UR: a 1-warp masked fp32 dot packs its K-mask bits from uniform predicates;
- F2FP.SATFINITE.E4M3/E5M2.F32.PACK_AB_MERGE_C and .F16.UNPACK_B_MERGE_C: float to fp8 casts
  (Triton 3.2 merges into the high half of a register, ``d.H1``);
- F2FP.F16/BF16.F32.PACK_AB.RZ: ``fp_downcast_rounding="rtz"`` (a NaN becomes 0x7fff);
- FMNMX.NAN: ``tl.minimum/maximum(..., propagate_nan=ALL)``;
- .FTZ on FADD/FMUL/FFMA/FSETP/FRND (libdevice's sqrt_rn and erf, ``tl.ceil``; a NaN result
  is 0x7fffffff whatever NaN went in);
- VHMNMX (and .BF16_V2): a column max/min of four half or bf16 rows (-0 below +0);
- UPLOP3: the tutorial's layer norm forward;
- MUFU.EX2 (erf in the GELU), MUFU.SQRT and MUFU.RCP (the layer norm's 1/sqrt): the H200's
  approximations, bit for bit (tests/test_trace_mufu.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm

TRI = TRACE_DATA / "opcodes_tri"
LAUNCHES = [L["id"] for L in lab.manifest(TRI)["launches"]]
# four launches stay in the fast suite (about a second each: an fp8 cast, a NaN-propagating
# minimum, the MUFU-heavy layer norm, the bf16 column minimum); the others are slow
FAST = {
    "360_cast_f32_e4m3",
    "360_min_nan_f32",
    "360_colmin_bf16",
    "360_layernorm_f32",
}


@needs_nvdisasm
@pytest.mark.parametrize(
    "launch_id",
    [x if x in FAST else pytest.param(x, marks=pytest.mark.slow) for x in LAUNCHES],
)
def test_the_triton_kernels_compute_what_the_h200_computed(launch_id: str) -> None:
    """Every buffer a launch wrote, byte for byte as the H200 wrote it (the GELU's erf and
    the layer norm's 1/sqrt through the H200's own MUFU.EX2, SQRT and RCP)."""
    _, out = lab.run(launch_id, TRI)
    assert out
    for i, data in out.items():
        assert data == lab.gpu_output(launch_id, i, TRI), f"{launch_id} argument {i}"


# The launches against references written out here in NumPy from PTX's definitions.


def _input(launch_id: str, name: str, dtype: str) -> np.ndarray:
    return np.fromfile(TRI / "inputs" / f"{launch_id}.{name}.bin", dtype=dtype)


def _fp8_table(e4m3: bool) -> np.ndarray:
    """The value of each of the 128 non-negative fp8 codes (NaN and infinity codes: NaN)."""
    ebits, mbits, bias = (4, 3, 7) if e4m3 else (5, 2, 15)
    out = []
    for code in range(128):
        e, m = code >> mbits, code & ((1 << mbits) - 1)
        if (e4m3 and code == 0x7F) or (not e4m3 and e == 31):
            out.append(np.nan)
        elif e == 0:
            out.append(m * 2.0 ** (1 - bias - mbits))
        else:
            out.append((1 + m / 2**mbits) * 2.0 ** (e - bias))
    return np.array(out)


def _satfinite(x: np.ndarray, e4m3: bool) -> np.ndarray:
    """cvt.rn.satfinite to e4m3/e5m2 of numbers, by search: the nearest finite code, on a tie
    the even one; past the largest finite value the largest; the sign bit kept."""
    table = _fp8_table(e4m3)
    finite = np.flatnonzero(~np.isnan(table))
    out = []
    for v in x.astype(np.float64):
        a = min(abs(v), table[finite[-1]])
        dist = np.abs(table[finite] - a)
        best = finite[dist == dist.min()]
        code = int(best[0] if len(best) == 1 else best[best % 2 == 0][0])
        out.append(code | (0x80 if np.signbit(v) else 0))
    return np.array(out, dtype=np.uint8)


@needs_nvdisasm
@pytest.mark.parametrize(
    ("launch_id", "source", "e4m3"),
    [
        ("360_cast_f32_e4m3", "float32", True),
        pytest.param("360_cast_f32_e5m2", "float32", False, marks=pytest.mark.slow),
        pytest.param("360_cast_f16_e5m2", "float16", False, marks=pytest.mark.slow),
        pytest.param("320_cast_f32_e4m3", "float32", True, marks=pytest.mark.slow),
    ],
)
def test_fp8_casts_against_ptx_satfinite(launch_id: str, source: str, e4m3: bool) -> None:
    _, out = lab.run(launch_id, TRI)
    x = _input(launch_id, "x_ptr", source)[:250]
    got = np.frombuffer(out[1], dtype=np.uint8)[:250]
    num = ~np.isnan(x)  # PTX says a NaN gives a NaN, not which: the H200's outputs say
    assert got[num].tolist() == _satfinite(x[num], e4m3).tolist()
    nan = _fp8_table(e4m3)[got[~num] & 0x7F]
    assert np.isnan(nan).all()


@needs_nvdisasm  # the only fast test that runs UP2UR (test_trace_opcodes' registry check)
def test_masked_dot_packing_uniform_predicates_against_numpy() -> None:
    """UP2UR: the 1-warp fp32 dot's K mask; small integers, so every sum is exact."""
    _, out = lab.run("360_up2ur_dot", TRI)
    m, n, k, sam, sbk, scm = 30, 50, 40, 40, 40, 50
    a = _input("360_up2ur_dot", "a_ptr", "float32")[: m * sam].reshape(m, sam)[:, :k]
    b = _input("360_up2ur_dot", "b_ptr", "float32")[: n * sbk].reshape(n, sbk)[:, :k]
    c = np.frombuffer(out[2], dtype=np.float32)[: m * scm].reshape(m, scm)[:, :n]
    assert np.array_equal(c, a.astype(np.float64) @ b.T.astype(np.float64))


@pytest.mark.slow  # make test compares 360_min_nan_f32 with the H200 byte for byte
@needs_nvdisasm
def test_nan_propagating_minimum_and_flushed_ceil_against_numpy() -> None:
    """FMNMX.NAN: a NaN on either side gives 0x7fffffff; FRND.FTZ.CEIL: a denormal is a
    zero of its sign before it is rounded up."""
    _, out = lab.run("360_min_nan_f32", TRI)
    x, z = (
        _input("360_min_nan_f32", "x_ptr", "float32"),
        _input("360_min_nan_f32", "z_ptr", "float32"),
    )
    got = np.frombuffer(out[1], dtype=np.uint32)[:250]
    want = np.minimum(x[:250], z[:250]).view(np.uint32)
    nan = np.isnan(x[:250]) | np.isnan(z[:250])
    assert np.array_equal(got[nan], np.full(nan.sum(), 0x7FFFFFFF, dtype=np.uint32))
    assert np.array_equal(np.isnan(got.view(np.float32)), nan)
    num = ~nan & (x[:250] != z[:250])  # equal values: either zero's sign may be kept
    assert np.array_equal(got[num], want[num])
    _, out = lab.run("360_ceil_f32", TRI)
    x = _input("360_ceil_f32", "x_ptr", "float32")[:250]
    flushed = np.where(np.abs(x) < np.float32(2.0**-126), np.copysign(np.float32(0), x), x)
    got = np.frombuffer(out[1], dtype=np.float32)[:250]
    num = ~np.isnan(x)
    assert np.array_equal(got[num].view(np.uint32), np.ceil(flushed[num]).view(np.uint32))


@needs_nvdisasm
@pytest.mark.parametrize(
    ("launch_id", "dtype", "pick"),
    [
        ("360_colmax_f16", "float16", np.fmax),
        pytest.param("360_colmin_bf16", "bfloat16", np.fmin, marks=pytest.mark.slow),
    ],
)
def test_column_max_and_min_of_half_rows_against_numpy(launch_id: str, dtype: str, pick) -> None:
    """VHMNMX: the max (min) of three half (bf16) pairs; a NaN loses to a number. The tile
    is 4 x 256, rows C = 253 apart, with R = 3 rows and C columns in the mask (0 elsewhere)."""
    _, out = lab.run(launch_id, TRI)
    raw = _input(launch_id, "x_ptr", "uint16")
    x = np.zeros((4, 256))
    for r in range(3):
        x[r, :253] = _as_float(raw[r * 253 : (r + 1) * 253], dtype)
    want = pick.reduce(x, axis=0)
    got = _as_float(np.frombuffer(out[1], dtype=np.uint16)[:256], dtype)
    assert np.array_equal(got, want, equal_nan=True)


def _as_float(bits: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "float16":
        return bits.view(np.float16).astype(np.float64)
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


@pytest.mark.slow  # make test compares 360_layernorm_f32 with the H200 byte for byte
@needs_nvdisasm
def test_layer_norm_forward_against_numpy() -> None:
    """UPLOP3 (its predicates fixed at compile time) on the tutorial's layer norm: the mean,
    1/std and the normalised rows, to float32's precision."""
    _, out = lab.run("360_layernorm_f32", TRI)
    x = _input("360_layernorm_f32", "X", "float32")[: 4 * 768].reshape(4, 768).astype(np.float64)
    w = _input("360_layernorm_f32", "W", "float32")[:768].astype(np.float64)
    b = _input("360_layernorm_f32", "B", "float32")[:768].astype(np.float64)
    mean = x.mean(axis=1)
    rstd = 1 / np.sqrt(x.var(axis=1) + 1e-5)
    y = (x - mean[:, None]) * rstd[:, None] * w + b
    got_y = np.frombuffer(out[1], dtype=np.float32)[: 4 * 768].reshape(4, 768)
    assert np.allclose(np.frombuffer(out[4], dtype=np.float32)[:4], mean, rtol=1e-5, atol=1e-6)
    assert np.allclose(np.frombuffer(out[5], dtype=np.float32)[:4], rstd, rtol=1e-5)
    assert np.allclose(got_y, y, rtol=1e-4, atol=1e-4)


@needs_nvdisasm
def test_sine_of_large_arguments_reads_the_cubins_own_table() -> None:
    """tl.sin's argument reduction past 105615 reads libdevice's 2/pi bits from the cubin's
    .nv.global.init through an address in constant bank 4; sinf is within 2 ulp."""
    _, out = lab.run("360_sin_f32", TRI)
    x = _input("360_sin_f32", "x_ptr", "float32")[:250]
    got = np.frombuffer(out[1], dtype=np.float32)[:250].astype(np.float64)
    with np.errstate(invalid="ignore"):  # the inputs hold infinities: sin is NaN there
        want = np.sin(x.astype(np.float64))
    assert (np.abs(x) > 105615).sum() >= 3
    assert np.allclose(got, want, rtol=0, atol=3e-7, equal_nan=True)
