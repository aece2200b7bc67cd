"""``cvt``'s ``.satfinite`` to bf16 and f16 (``F2FP.SATFINITE.BF16.F32.PACK_AB``, the scalar
``MERGE_C`` form, ``.RZ``, ``.RELU``; sm_80's spelling without ``.F32``), to fp8, and
``cvt.{rn,rz}{.relu}.tf32.f32`` (``F2FP.TF32.F32.PACK_B``, sm_90): how CUTLASS's epilogues
with saturation convert their results. The emulator refused every ``.SATFINITE`` form to
16 bits and the tf32 one. tests/data/trace/f2fp_sat is the project's own kernel; the
figures here are the PTX ISA's (``.satfinite``: a NaN stays a NaN, the canonical one, an
infinity or a magnitude past the largest finite value is the largest finite value of its
sign; ``.relu``: a negative value and -0 are +0), worked bit by bit in plain Python.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from fractions import Fraction

import numpy as np
import pytest

from shmem_cli.cuda import sass
from shmem_cli.trace.emulator import execute
from shmem_cli.trace.emulator.state import GlobalMemory

from .conftest import TRACE_DATA, needs_nvdisasm
from .trace_util import functions, one_block

DATA = TRACE_DATA / "f2fp_sat"
WORDS = 20  # per thread: kernels/f2fp_sat.cu's table
NAN16, NAN_TF32 = 0x7FFF, 0x7FFFE000  # tf32's: float's, the low 13 bits clear (the H100)


def _value(bits: int) -> Fraction:
    """A finite float32's value, exactly."""
    e, m = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    v = Fraction(m | 0x800000, 1 << 23) * Fraction(2) ** (e - 127) if e else Fraction(m, 1 << 149)
    return -v if bits >> 31 else v


def _narrow(bits: int, mant: int, emin: int, top: Fraction, rz: bool) -> tuple[int, int]:
    """A finite nonzero float32's magnitude rounded to ``mant`` fraction bits with ``emin``
    the smallest normal exponent (to nearest even, or toward zero): the result as (exponent
    field with bias 1 - emin, fraction), or (-1, -1) past ``top``, the largest finite value."""
    a = abs(_value(bits))
    e = max(math.frexp(float(a))[1] - 1, emin)  # a float32 is a double exactly
    q = a / Fraction(2) ** (e - mant)
    n = math.floor(q)
    if not rz and (q - n > Fraction(1, 2) or (q - n == Fraction(1, 2) and n % 2)):
        n += 1
    if n * Fraction(2) ** (e - mant) > top:
        return -1, -1
    if n >> mant == 0:  # a denormal (or zero)
        return 0, n
    if n >> (mant + 1):  # rounded up to the next power of two
        e, n = e + 1, n >> 1
    return e - emin + 1, n - (1 << mant)


def _f16(bits: int, rz: bool, sat: bool, relu: bool) -> int:
    sign = bits >> 31
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return NAN16
    if relu and sign:
        return 0
    if bits & 0x7FFFFFFF == 0x7F800000:
        return (sign << 15) | (0x7BFF if sat else 0x7C00)
    if bits & 0x7FFFFFFF == 0:
        return sign << 15
    e, f = _narrow(bits, 10, -14, Fraction(65504), rz)
    if e < 0:
        e, f = (30, 0x3FF) if sat or rz else (31, 0)
    return (sign << 15) | (e << 10) | f


def _bf16(bits: int, rz: bool, sat: bool, relu: bool) -> int:
    """On the float's bits: the top 16 of them rounded (a carry runs into the exponent)."""
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return NAN16
    if relu and bits >> 31:
        return 0
    r = bits >> 16 if rz else (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return (r & 0x8000) | 0x7F7F if sat and r & 0x7FFF >= 0x7F80 else r


def _tf32(bits: int, rz: bool, relu: bool) -> int:
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return NAN_TF32
    if relu and bits >> 31:
        return 0
    r = bits if rz else bits + 0xFFF + ((bits >> 13) & 1)  # a carry past the largest: inf
    return r & 0xFFFFE000


def _fp8(bits: int, e4m3: bool, relu: bool) -> int:
    """cvt.rn.satfinite to e4m3 (largest 448, no infinity) or e5m2 (57344); a NaN of either
    sign is 0x7f (the H200's, tests/data/trace/probes)."""
    sign = bits >> 31
    if (bits & 0x7FFFFFFF) > 0x7F800000:
        return 0x7F
    if relu and sign:
        return 0
    mant, emin, top = (3, -6, 448) if e4m3 else (2, -14, 57344)
    biggest = (0x7E if e4m3 else 0x7B) | (sign << 7)
    if bits & 0x7FFFFFFF == 0x7F800000:
        return biggest
    if bits & 0x7FFFFFFF == 0:
        return sign << 7
    e, f = _narrow(bits, mant, emin, Fraction(top), rz=False)
    return biggest if e < 0 else (sign << 7) | (e << mant) | f


def expected(x: np.ndarray, arch: int) -> np.ndarray:
    """Each thread's words (kernels/f2fp_sat.cu's table) for the inputs ``x``, by the PTX ISA;
    sm_80 writes 0 for the fp8 (sm_89) and tf32 (sm_90) words."""
    out = []
    for a, b in x.view(np.uint32).reshape(-1, 2).tolist():
        w = []
        for rz, relu in ((False, False), (True, False), (False, True), (True, True)):
            w.append((_bf16(a, rz, True, relu) << 16) | _bf16(b, rz, True, relu))
            w.append((_f16(a, rz, True, relu) << 16) | _f16(b, rz, True, relu))
        for rz, sat, relu in ((0, 1, 0), (1, 1, 0), (0, 1, 1), (0, 0, 1)):
            w.append(
                _bf16(a, bool(rz), bool(sat), bool(relu))
                | _f16(b, bool(rz), bool(sat), bool(relu)) << 16
            )
        for relu in (False, True):
            e4 = (_fp8(a, True, relu) << 8) | _fp8(b, True, relu)
            e5 = (_fp8(a, False, relu) << 8) | _fp8(b, False, relu)
            w.append(e4 | (e5 << 16) if arch >= 89 else 0)
        tf = [_tf32(a, False, False), _tf32(b, False, False), _tf32(a, True, False)]
        tf += [_tf32(b, True, False), _tf32(a, False, True), _tf32(b, True, True)]
        w += tf if arch >= 90 else [0] * 6
        out.append(w)
    return np.array(out, dtype=np.uint32)


def _run(cubin: str) -> np.ndarray:
    x = np.fromfile(DATA / "inputs" / "in.bin", dtype=np.float32)
    mem = GlobalMemory()
    a_in, a_out = mem.add_buffer(x.tobytes(), "in"), mem.add_buffer(64 * WORDS * 4, "out")
    base = 0x160 if cubin.endswith("sm_80.cubin") else 0x210  # the parameters' place
    run = one_block(struct.pack("<QQ", a_in, a_out), mem, 64, 0, base)
    fn = functions(DATA / cubin)["_Z8f2fp_satPKfPj"]
    execute.run(fn, run)
    return np.frombuffer(mem.read("out"), dtype=np.uint32).reshape(64, WORDS)


@needs_nvdisasm
@pytest.mark.parametrize(
    ("cubin", "arch"), [("f2fp_sat.sm_90a.cubin", 90), ("f2fp_sat.sm_80.cubin", 80)]
)
def test_satfinite_relu_and_tf32_conversions_as_the_ptx_isa_defines_them(
    cubin: str, arch: int
) -> None:
    x = np.fromfile(DATA / "inputs" / "in.bin", dtype=np.float32)
    np.testing.assert_array_equal(_run(cubin), expected(x, arch))


def test_the_reference_on_hand_worked_edges() -> None:
    """The reference itself, on values whose results are known by heart."""
    bits = lambda v: struct.unpack("<I", struct.pack("<f", v))[0]  # noqa: E731
    assert _f16(bits(65520.0), rz=False, sat=False, relu=False) == 0x7C00
    assert _f16(bits(65520.0), rz=False, sat=True, relu=False) == 0x7BFF
    assert _f16(bits(-65520.0), rz=True, sat=False, relu=False) == 0xFBFF
    assert _f16(bits(2.0**-25), rz=False, sat=True, relu=False) == 0x0000  # a tie to even
    assert _f16(bits(3 * 2.0**-25), rz=False, sat=True, relu=False) == 0x0002
    assert _f16(bits(1 + 2.0**-11), rz=False, sat=True, relu=False) == 0x3C00
    assert _f16(bits(1 + 3 * 2.0**-11), rz=False, sat=True, relu=False) == 0x3C02
    assert _f16(bits(-0.0), rz=False, sat=True, relu=True) == 0x0000
    assert _bf16(0x7F7F8000, rz=False, sat=True, relu=False) == 0x7F7F
    assert _bf16(0x7F7F8000, rz=False, sat=False, relu=False) == 0x7F80
    assert _bf16(0xFF800000, rz=False, sat=True, relu=False) == 0xFF7F
    assert _bf16(0x7F800001, rz=True, sat=True, relu=False) == NAN16
    assert _tf32(0x7F7FF000, rz=False, relu=False) == 0x7F800000
    assert _tf32(0x3F801000, rz=False, relu=False) == 0x3F800000
    assert _tf32(0x3F803000, rz=False, relu=False) == 0x3F804000
    assert _fp8(bits(464.0), e4m3=True, relu=False) == 0x7E  # the tie past 448: 448
    assert _fp8(bits(-1e9), e4m3=False, relu=False) == 0xFB
    assert _fp8(bits(2.0**-9), e4m3=True, relu=False) == 0x01


def _merge_c_program(c_operand: str) -> sass.Function:
    body = [
        "LDC.64 R10, c[0x0][0x210]",
        "MOV R2, 0x477ff000",  # 65520: past half's largest finite value
        "MOV R3, 0xabcd1234",
        f"F2FP.SATFINITE.F16.F32.MERGE_C R4, R2, {c_operand}",
        "STG.E desc[UR4][R10.64], R4",
        "EXIT",
    ]
    lines = ['.section\t.text._Z1kv,"ax",@progbits', '\t//## File "k.cu", line 7']
    lines += [f"        /*{16 * i:04x}*/  {t} ;" for i, t in enumerate(body)]
    (fn,) = sass.parse("\n".join(lines))
    return fn


@pytest.mark.parametrize(("c", "high"), [("RZ", 0), ("R3", 0x1234), ("R3.H1", 0xABCD)])
def test_merge_c_puts_the_value_below_the_merged_half(c: str, high: int) -> None:
    """ptxas (CUDA 13.0) gave the one-value forms only RZ to merge; another register's half
    goes above the value as in the fp8 form (measured there: tests/data/trace/probes)."""
    mem = GlobalMemory()
    out = mem.add_buffer(4, "out")
    execute.run(_merge_c_program(c), one_block(struct.pack("<Q", out), mem, 1, 0))
    assert struct.unpack("<I", mem.read("out"))[0] == (high << 16) | 0x7BFF


@pytest.mark.skipif(
    not (DATA / "measured.json").exists(), reason="not yet run on a GPU (lab/run.sh OUTDIR)"
)
@needs_nvdisasm
def test_the_conversions_as_the_gpu_wrote_them() -> None:
    measured = json.loads((DATA / "measured.json").read_text())
    cubin = (DATA / "f2fp_sat.sm_90a.cubin").read_bytes()
    assert measured["cubin_sha256"] == hashlib.sha256(cubin).hexdigest()
    assert _run("f2fp_sat.sm_90a.cubin").tobytes() == bytes.fromhex(measured["out_hex"])
