"""The probe lab (issues 27/29/30): semantics the emulator had taken from the documentation,
as the H200 computed them.

tests/data/trace/probes holds the project's own kernels that probe float32 minima and maxima
(``fminf``/``fmaxf``, ``.NaN``, ``.ftz``) on signed zeros, NaN payloads and denormals; the
value and predicate of a shuffle from a lane not executing it; the fp8 pair conversions and
their ``.relu`` forms on NaN of either sign; three-way half and bf16 minima (``VHMNMX``,
``.NAN``); ``.ftz`` arithmetic around the smallest normal in every rounding mode; 64- and
128-bit atomics on shared memory; half2 and bf16x2 atomic minima and maxima on global memory;
the TMA reduction copies' half and bf16 minima and maxima; and the integer tensor cores'
fragments. Every buffer of every launch is compared byte for byte with what the H200 wrote
(outputs/); the rules the buffers settled are checked against exact rational arithmetic, and
so are the double operations' rounding modes (IEEE 754's definition, not measured here).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from shmem_cli.cuda import sass
from shmem_cli.trace.emulator import decode, execute
from shmem_cli.trace.emulator.ops.floating import fma64
from shmem_cli.trace.emulator.state import Launch

from . import hopper_lab as lab
from .conftest import TRACE_DATA, needs_nvdisasm

LAB = TRACE_DATA / "probes"
LAUNCHES = [L["id"] for L in lab.manifest(LAB)["launches"]]


def _inputs(name: str, dtype: type) -> np.ndarray:
    return np.fromfile(LAB / "inputs" / f"{name}.bin", dtype=dtype)


def _gpu(lid: str, dtype: type, rows: int, arg: int = 0) -> np.ndarray:
    return np.frombuffer(lab.gpu_output(lid, arg, LAB), dtype=dtype).reshape(rows, -1)


@needs_nvdisasm
@pytest.mark.parametrize("launch_id", LAUNCHES)
def test_the_probes_compute_what_the_h200_computed(launch_id: str) -> None:
    """Every buffer a launch wrote, byte for byte as the H200 wrote it (outputs/: each launch
    run twice there, both runs the same)."""
    _, out = lab.run(launch_id, LAB)
    assert out
    for i, data in out.items():
        assert data == lab.gpu_output(launch_id, i, LAB), f"{launch_id} argument {i}"


_TINY = Fraction(1, 2**126)


def _flush(x: Fraction, negative: bool) -> tuple[Fraction, bool]:
    return (Fraction(0), negative) if 0 < abs(x) < _TINY else (x, negative)


def _round(x: Fraction, mode: str, quantum: Fraction) -> Fraction:
    """``x`` rounded to a multiple of ``quantum`` (RN: ties to even)."""
    q, r = divmod(x, quantum)  # floor division: q * quantum <= x
    if r == 0:
        return x
    down, up = q * quantum, (q + 1) * quantum
    if mode == "RM":
        return down
    if mode == "RP":
        return up
    if mode == "RZ":
        return down if x > 0 else up
    if 2 * r != quantum:
        return down if 2 * r < quantum else up
    return down if q % 2 == 0 else up


def _ulp24(x: Fraction, floor: Fraction | None) -> Fraction:
    """The spacing of 24-bit significands at ``x`` (no smaller than ``floor``)."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > abs(x):
        e -= 1
    q = Fraction(2) ** (e - 23)
    return max(q, floor) if floor is not None else q


def _f32_bits(value: Fraction, negative: bool) -> int:
    if value == 0:
        return 0x80000000 if negative else 0
    return int(np.array([float(value)], dtype=np.float32).view(np.uint32)[0])


def _ftz_reference(x: float, y: float, z: float, op: str, mode: str, ftz: bool) -> int:
    """PTX's mul/add/fma rounded once from the exact rational result; with ``.ftz`` a
    denormal operand is a zero of its sign and a result that, rounded to 24 significant bits
    with no bound on the exponent, is below the smallest normal is a zero of its sign."""
    if np.isnan([x, y, z]).any():
        return 0x7FFFFFFF
    vals = []
    for v in (x, y, z):
        f, neg = Fraction(v), bool(np.signbit(v))
        vals.append(_flush(f, neg) if ftz else (f, neg))
    (fx, nx), (fy, ny), (fz, nz) = vals
    if op == "mul":
        exact, zero_neg = fx * fy, nx != ny
    else:
        first, first_neg = (fx, nx) if op == "add" else (fx * fy, nx != ny)
        exact = first + fz
        both = first == 0 and fz == 0 and first_neg == nz
        zero_neg = first_neg if both else mode == "RM"
    if exact == 0:
        return _f32_bits(exact, zero_neg)
    negative = exact < 0
    if ftz and abs(_round(exact, mode, _ulp24(exact, None))) < _TINY:
        return _f32_bits(Fraction(0), negative)
    return _f32_bits(_round(exact, mode, _ulp24(exact, Fraction(1, 2**149))), negative)


def test_ftz_arithmetic_flushes_after_rounding_to_24_bits_on_the_h200() -> None:
    """``mul``/``add``/``fma`` ``.ftz`` in the four rounding modes, then without ``.ftz``
    (ftz_edges): the H200 rounds the exact result once and flushes a result that is tiny
    after rounding with an unbounded exponent (IEEE 754's tininess after rounding), so an
    exact value just below 2^-126 becomes 2^-126 where its rounding reaches it and a zero
    where it does not; an exact zero sum is -0 rounding toward minus infinity."""
    x, y, z = (_inputs(f"ftz_{k}", np.float32) for k in "xyz")
    gpu = _gpu("ftz_edges", np.uint32, 15)
    rows = [(op, mode, True) for op in ("mul", "add", "fma") for mode in ("RN", "RZ", "RM", "RP")]
    rows += [("mul", "RN", False), ("add", "RN", False), ("fma", "RN", False)]
    for k, (op, mode, ftz) in enumerate(rows):
        want = [
            _ftz_reference(float(a), float(b), float(c), op, mode, ftz)
            for a, b, c in zip(x, y, z, strict=True)
        ]
        assert gpu[k].tolist() == want, f"{op}.{mode.lower()}{'.ftz' if ftz else ''}"


def _min_max_reference(a: np.ndarray, b: np.ndarray, smaller: bool) -> np.ndarray:
    """fminf/fmaxf as the H200 computes them: -0 below +0, a NaN loses to a number, two NaNs
    give 0x7fffffff."""
    with np.errstate(invalid="ignore"):  # signalling NaNs
        fa, fb = a.view(np.float32).astype(np.float64), b.view(np.float32).astype(np.float64)
    key_a = fa + np.where((fa == 0) & np.signbit(fa), -1e-300, 0.0)
    key_b = fb + np.where((fb == 0) & np.signbit(fb), -1e-300, 0.0)
    take_b = (key_b < key_a) if smaller else (key_b > key_a)
    out = np.where(take_b | np.isnan(fa), b, a)
    return np.where(np.isnan(fa) & np.isnan(fb), np.uint32(0x7FFFFFFF), out)


def test_float_minimum_and_maximum_on_the_h200() -> None:
    """FMNMX (fminmax, every ordered pair of 16 specials): -0 below +0, a NaN loses to a number
    and two NaNs of any payload or sign give 0x7fffffff; ``.NaN`` gives 0x7fffffff for any NaN
    in; ``.ftz`` takes a denormal operand as a zero of its sign."""
    a, b = _inputs("fmm_a", np.uint32), _inputs("fmm_b", np.uint32)
    gpu = _gpu("fminmax", np.uint32, 8)
    flushed = [np.where(v & 0x7F800000 == 0, v & 0x80000000, v).astype(np.uint32) for v in (a, b)]
    any_nan = np.isnan(a.view(np.float32)) | np.isnan(b.view(np.float32))
    for k, (smaller, nan, ftz) in enumerate(
        [(True, False, False), (False, False, False), (True, True, False), (False, True, False)]
        + [(True, False, True), (False, False, True), (True, True, True), (False, True, True)]
    ):
        x, y = flushed if ftz else (a, b)
        want = _min_max_reference(x, y, smaller)
        if nan:
            want = np.where(any_nan, np.uint32(0x7FFFFFFF), want)
        assert gpu[k].tolist() == want.tolist(), f"row {k}"


def test_fp8_pairs_write_nan_as_0x7f_whatever_its_sign_on_the_h200() -> None:
    """``cvt.rn.satfinite.e4m3x2/e5m2x2`` (fp8_pack, rows 2-5): a NaN of either sign, quiet or
    signalling, becomes 0x7f in both formats; ``.relu`` (fp8_relu) keeps it and turns every
    negative value and -0 into 0x00."""
    fx, fy = _inputs("fp8_x", np.float32), _inputs("fp8_y", np.float32)
    gpu = _gpu("fp8_pack", np.uint32, 6)
    relu = _gpu("fp8_relu", np.uint32, 2)
    for row in (2, 3):
        hi, lo = gpu[row] >> 8 & 0xFF, gpu[row] & 0xFF
        assert (hi[np.isnan(fx)] == 0x7F).all() and (lo[np.isnan(fy)] == 0x7F).all()
    for shift in (0, 16):
        pair = relu[0] >> shift
        hi, lo = pair >> 8 & 0xFF, pair & 0xFF
        assert (hi[np.isnan(fx)] == 0x7F).all() and (lo[np.isnan(fy)] == 0x7F).all()
        assert (hi[np.signbit(fx) & ~np.isnan(fx)] == 0).all()
        assert (lo[np.signbit(fy) & ~np.isnan(fy)] == 0).all()


@needs_nvdisasm
def test_the_probes_run_the_instructions_they_probe() -> None:
    """The kernels reach the forms they were written for."""
    with decode.recording() as seen:
        for lid in ("fminmax", "ftz_edges", "min3_nan", "fp8_relu", "atomics_half"):
            lab.run(lid, LAB)
    assert {"FMNMX", "FMUL", "FADD", "FFMA", "VHMNMX", "F2FP", "REDG", "ATOMG"} <= seen


def _round53(exact: Fraction, mode: str) -> float:
    """``exact`` rounded to a double with ``mode`` (53 significant bits, denormals' spacing
    2^-1074), by exact rational arithmetic."""
    return float(_round(exact, mode, _ulp53(exact)))


def _ulp53(x: Fraction) -> Fraction:
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > abs(x):
        e -= 1
    return max(Fraction(2) ** (e - 52), Fraction(1, 2**1074))


@pytest.mark.parametrize("mode", ["RN", "RZ", "RM", "RP"])
def test_double_fma_rounds_the_exact_result_once_in_each_mode(mode: str) -> None:
    """``fma.rn/rz/rm/rp.f64`` (and the adds and products made of it): the exact rational
    result rounded once, as IEEE 754 and PTX define them; an exact zero sum is -0 toward minus
    infinity unless both addends are +0."""
    rng = np.random.default_rng(27)
    a = rng.normal(0, 1, 300) * 2.0 ** rng.integers(-60, 60, 300)
    b = rng.normal(0, 1, 300) * 2.0 ** rng.integers(-60, 60, 300)
    c = -a * b + rng.normal(0, 1, 300) * 2.0 ** rng.integers(-200, 0, 300)
    c[:50] = rng.normal(0, 1, 50)
    a[-4:], b[-4:], c[-4:] = [1.0, 0.0, -0.0, 2.0**-1070], [1.0, 1.0, 1.0, 2.0**-10], [-1, 0, 0, 0]
    got = fma64(a, b, c, mode)
    for x, y, z, r in zip(a, b, c, got, strict=True):
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        if exact == 0:
            plus = x * y == 0 == z and not (np.signbit(x * y) or np.signbit(z))
            want = -0.0 if mode == "RM" and not plus else 0.0 if plus or x * y != 0 else x * y + z
        else:
            want = _round53(exact, mode)
        assert (float(r), bool(np.signbit(r))) == (want, bool(np.signbit(want))), (x, y, z)


def test_double_add_and_multiply_take_their_rounding_mode() -> None:
    """``DADD.RZ``/``.RP`` and ``DMUL.RM``/``.RP`` (``__dadd_rz``, ``__dmul_ru``, ...; they
    ran as round-to-nearest): 1 + 2^-60 is 1 toward zero and the next double above 1 toward
    plus infinity; (1 + 2^-52) x (1 + 2^-52) is 1 + 2^-51 toward minus infinity and the next
    double above it toward plus infinity. The low bit of each result is a shared address."""
    body = """MOV R2, RZ
MOV R3, 0x3ff00000
MOV R4, RZ
MOV R5, 0x3c300000
MOV R8, 0x1
MOV R9, 0x3ff00000
DADD.RZ R6, R2, R4
IMAD.SHL.U32 R7, R6, 0x4, RZ
STS [R7], RZ
DADD.RP R6, R2, R4
IMAD.SHL.U32 R7, R6, 0x4, RZ
STS [R7], RZ
DMUL.RM R6, R8, R8
IMAD.SHL.U32 R7, R6, 0x4, RZ
STS [R7], RZ
DMUL.RP R6, R8, R8
IMAD.SHL.U32 R7, R6, 0x4, RZ
STS [R7], RZ
EXIT"""
    got = [int(rec.addr[0, 0]) // 4 for rec in _sass_run(body).records]
    assert got == [0, 1, 2, 3]  # low words: 1, 1 + 1 ulp; 1 + 2^-51 is low word 2, then 3


def test_a_saturated_float_result_clamps_and_turns_nan_into_plus_zero() -> None:
    """``add.sat.f32`` (``__saturatef``, ``FADD.SAT``): the result clamped to [0, 1], a NaN
    result +0 (PTX's definition; it gave 0x7fffffff); ``FADD.RM.SAT`` of two negatives is +0,
    not the -0 of an exact zero sum. Each result's bits, shifted, are a shared address."""
    body = """MOV R2, 0x7fc00000
MOV R3, 0x3f800000
MOV R4, 0xbf800000
FADD.SAT R6, R2, R3
SHF.R.U32.HI R7, RZ, 0x15, R6
STS [R7], RZ
FADD.SAT R6, R3, R3
SHF.R.U32.HI R7, RZ, 0x15, R6
STS [R7], RZ
FADD.RM.SAT R6, R4, R4
SHF.R.U32.HI R7, RZ, 0x15, R6
STS [R7], RZ
EXIT"""
    got = [int(rec.addr[0, 0]) for rec in _sass_run(body).records]
    assert got == [0, 0x3F800000 >> 21, 0]  # +0, 1.0, +0 (-0 would be 0x80000000 >> 21)


def test_a_plain_fma_rounds_once_where_float64_would_land_on_a_tie() -> None:
    """``FFMA`` of (1 + 2^-12)^2 + 2^-60: the exact result lies just above the float32 tie
    1 + 2^-11 + 2^-24, so it rounds up to 1 + 2^-11 + 2^-23 (0x3f800801); rounded first to
    float64 (the tie itself) and then to float32 it would be 0x3f800800 (ties to even). The
    result's low byte, times 4, is a shared address."""
    body = """MOV R2, 0x3f800800
MOV R3, 0x21800000
FFMA R6, R2, R2, R3
SHF.L.U32 R7, R6, 0x2, RZ
LOP3.LUT R7, R7, 0x3fc, RZ, 0xc0, !PT
STS [R7], RZ
EXIT"""
    got = [int(rec.addr[0, 0]) for rec in _sass_run(body).records]
    assert got == [4]


def _sass_run(body: str) -> execute.Trace:
    lines = ['.section\t.text._Z1kv,"ax",@progbits', '\t//## File "k.cu", line 7']
    lines += [f"        /*{16 * i:04x}*/  {t} ;" for i, t in enumerate(body.splitlines())]
    (fn,) = sass.parse("\n".join(lines))
    return execute.run(fn, Launch(block=(32, 1, 1), static_smem=1024))


def test_bf16_rounding_writes_the_canonical_nan_whatever_the_payload() -> None:
    """Rounding a NaN's bits to bf16 carried an all-ones payload into the sign (0x7fffffff
    gave 0x8000, -0); every NaN is 0x7fff, as the H200's F2FP wrote (opcodes_tri's casts)."""
    from shmem_cli.trace.emulator.ops.convert import bf16_bits

    bits = np.array([0x7FFFFFFF, 0xFFFFFFFF, 0x7FC00000, 0x7F800001, 0x3F808000], np.uint32)
    got = bf16_bits(bits.view(np.float32)).tolist()
    assert got == [0x7FFF, 0x7FFF, 0x7FFF, 0x7FFF, 0x3F80]  # the last: a tie to even
