"""Probe lab 4: the directed roundings to half precision (tests/data/trace/probes4, the
project's own kernels/probes4.cu): doubles and floats to float16 and bfloat16 with ``.rn``,
``.rz``, ``.rm`` and ``.rp`` over 1024 values each (specials, ties and the values around
them, random numbers and bit patterns).

Measured on the H200 on 2026-12-05: every rounding of every value is compared with the
buffers it wrote (``outputs/``), byte for byte. What shmem predicted before the run is kept
in ``predicted/``. Every number's eight results are also compared with IEEE 754's roundings,
which the lab's ``reference.py`` works out exactly (fractions, no code of shmem's), and every
NaN's with the rule probe lab 3 measured for ``cvt.rn`` (docs/hardware-model.md, 9g), which
the H200 follows in the directed modes too.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from . import hopper_lab as lab
from .conftest import TRACE_DATA, module_from_file, needs_nvdisasm

LAB = TRACE_DATA / "probes4"
LAUNCHES = [L["id"] for L in lab.manifest(LAB)["launches"]]
#: the eight results of each value, in the order the kernels write them
COLUMNS = [f"{mode}.{fmt}" for fmt in ("f16", "bf16") for mode in ("rn", "rz", "rm", "rp")]
#: (launch, column) the GPU computes otherwise than shmem (strict: each fix takes its entry
#: out); to be filled in once measured
PENDING: set[tuple[str, str]] = set()
#: the conversions ptxas (CUDA 13.0) made of the kernels' cvt instructions
FORMS = {
    "cvt_f64": {"F2F.F16.F64", "F2F.F16.F64.RZ", "F2F.F16.F64.RM", "F2F.F16.F64.RP",
                "F2F.BF16.F64", "F2F.BF16.F64.RZ", "F2F.BF16.F64.RM", "F2F.BF16.F64.RP"},
    "cvt_f32": {"F2FP.F16.F32.PACK_AB", "F2FP.F16.F32.PACK_AB.RZ", "F2F.F16.F32.RM",
                "F2F.F16.F32.RP", "F2FP.BF16.F32.PACK_AB", "F2FP.BF16.F32.PACK_AB.RZ",
                "F2F.BF16.F32.RM", "F2F.BF16.F32.RP"},
}  # fmt: skip


def _measured(lid: str) -> bool:
    return (LAB / "outputs" / f"{lid}.arg0.bin").exists()


@needs_nvdisasm
@pytest.mark.parametrize("lid", LAUNCHES)
def test_the_kernels_convert_with_the_forms_probed(lid: str) -> None:
    """Each kernel's conversions, one SASS instruction per cvt, as the lab means them."""
    fn = lab.functions("probes4/probes4.sm_90.cubin")[lid]
    ops = {i.name for i in fn.instructions if i.opcode.startswith("F2F")}
    assert ops == FORMS[lid]


@needs_nvdisasm
@pytest.mark.parametrize(
    ("lid", "column"),
    [
        pytest.param(
            lid,
            c,
            marks=[pytest.mark.xfail(strict=True)] if (lid, c) in PENDING else [],
        )
        for lid in LAUNCHES
        for c in COLUMNS
    ],
)
def test_the_roundings_as_the_gpu_computed_them(lid: str, column: str) -> None:
    """Each rounding's 1024 results, as the H200 wrote them."""
    assert _measured(lid)
    _, out = lab.run(lid, LAB)
    k = COLUMNS.index(column)
    got = np.frombuffer(out[0], np.uint16).reshape(-1, 8)[:, k]
    gpu = np.frombuffer(lab.gpu_output(lid, 0, LAB), np.uint16).reshape(-1, 8)[:, k]
    wrong = np.flatnonzero(got != gpu)
    assert not len(wrong), [(int(i), hex(got[i]), hex(gpu[i])) for i in wrong[:8]]


def _reference() -> ModuleType:
    return module_from_file("probes4_reference", LAB / "reference.py")


@functools.cache
def _inputs(lid: str) -> Any:
    """The launch's 1024 source values, doubles or floats."""
    dtype = np.float64 if lid == "cvt_f64" else np.float32
    return np.fromfile(LAB / lab.launch(lid, LAB)["args"][1]["file"], dtype)


@functools.cache
def _emulated(lid: str) -> Any:
    """shmem's eight results of each value (1024 x 8 uint16)."""
    _, out = lab.run(lid, LAB)
    return np.frombuffer(out[0], np.uint16).reshape(-1, 8)


@functools.cache
def _ieee(lid: str) -> dict[str, list[int | None]]:
    """IEEE 754's results of each column (None for a NaN), from reference.py."""
    ref = _reference().reference([float(x) for x in _inputs(lid)])
    return {c: ref[c.split(".")[1], c.split(".")[0]] for c in COLUMNS}


@needs_nvdisasm
@pytest.mark.parametrize("lid", LAUNCHES)
@pytest.mark.parametrize("column", COLUMNS)
def test_every_number_rounds_as_ieee_754_rounds_it(lid: str, column: str) -> None:
    """Each number's result in each mode and format is IEEE 754's: once from the source,
    subnormals kept, past the largest finite value infinity or the largest finite value as
    the mode goes (the PTX ISA's cvt). What shmem predicted for the GPU."""
    want = _ieee(lid)[column]
    got = _emulated(lid)[:, COLUMNS.index(column)]
    numbers = [i for i, w in enumerate(want) if w is not None]
    assert len(numbers) > 1000  # the NaNs (a dozen) aside
    wrong = [(i, float(_inputs(lid)[i]), hex(got[i]), hex(want[i] or 0)) for i in numbers
             if got[i] != want[i]]  # fmt: skip
    assert not wrong, wrong[:8]


@needs_nvdisasm
def test_a_nan_from_double_keeps_sign_and_top_payload_in_every_mode() -> None:
    """A double NaN becomes the half or bf16 NaN of its sign with the payload's top bits,
    quiet bit set: probe lab 3's ``cvt.rn.bf16.f64`` and probe lab 2's ``cvt.rn.f16.f64``,
    and, as this lab measured, the same for ``.rz``, ``.rm`` and ``.rp``."""
    d = _inputs("cvt_f64").view(np.uint64)
    nan = np.flatnonzero(np.isnan(_inputs("cvt_f64")))
    assert len(nan) >= 8
    got = _emulated("cvt_f64")[nan]
    for i, row in zip(nan, got, strict=True):
        bits = int(d[i])
        sign, mantissa = (bits >> 63) << 15, bits & ((1 << 52) - 1)
        half = sign | 0x7E00 | (mantissa >> 42)  # 10 bits kept, the top one the quiet bit
        bf16 = sign | 0x7FC0 | (mantissa >> 45)  # 7 bits kept
        assert row.tolist() == [half] * 4 + [bf16] * 4, hex(bits)


@needs_nvdisasm
def test_a_nan_from_float_is_the_canonical_nan_in_every_mode() -> None:
    """Between float and half or bf16 every NaN is 0x7fff (the opcode labs' F2FP casts),
    whatever its sign and payload; assumed the same for F2F's ``.RM`` and ``.RP``."""
    nan = np.flatnonzero(np.isnan(_inputs("cvt_f32")))
    assert len(nan) >= 8
    assert (_emulated("cvt_f32")[nan] == 0x7FFF).all()


def _one(text: str, regs: dict[int, list[int]], out: int = 4) -> list[int]:
    """R``out`` (R4) of the first lanes after the instruction ``text``, the registers
    ``regs`` set in those lanes (a value a lane)."""
    from shmem_cli.cuda.sass import Function, parse_instruction
    from shmem_cli.trace.emulator.decode import decode_function
    from shmem_cli.trace.emulator.state import Block, Launch

    (step,) = decode_function(Function("k", [parse_instruction(text, 0, "k.cu", 1)], {}))
    blk = Block(Launch(block=(32, 1, 1), grid=(1, 1, 1)), registers=8)
    for r, lanes in regs.items():
        blk.r[r][: len(lanes)] = np.asarray(lanes, dtype=np.int64).astype(np.uint32)
    blk.run_wide(step, np.ones(32, dtype=bool))
    return [int(x) for x in blk.r[out][: len(regs[2])]]


def _f32(*xs: float) -> list[int]:
    return [int(b) for b in np.array(xs, np.float32).view(np.uint32)]


@pytest.mark.parametrize(
    ("text", "regs", "want"),
    [
        # 2049 lies between the halves 2048 and 2050; 65535 past the largest half, 65504
        ("I2F.F16.RZ R4, R2", {2: [2049, -2049, 65535]}, [0x6800, 0xE800, 0x7BFF]),
        ("I2F.F16.RM R4, R2", {2: [2049, -2049, 65535]}, [0x6800, 0xE801, 0x7BFF]),
        ("I2F.F16.RP R4, R2", {2: [2049, -2049, 65535]}, [0x6801, 0xE800, 0x7C00]),
        ("I2F.F16 R4, R2", {2: [2049, 2051, 65535]}, [0x6800, 0x6802, 0x7C00]),  # ties to even
        # 1e-8 is below half of the smallest half, 2**-24: RM gives -2**-24 to -1e-8 only
        ("F2F.F16.F32.RM R4, R2", {2: _f32(1e-8, -1e-8)}, [0x0000, 0x8001]),
        ("F2F.F16.F32.RP R4, R2", {2: _f32(1e-8, -1e-8)}, [0x0001, 0x8000]),
        # a = 1 + 2**-20 to the high half, b = its negative to the low one
        ("F2FP.BF16.F32.PACK_AB.RP R4, R2, R3",
         {2: _f32(1 + 2**-20), 3: _f32(-(1 + 2**-20))}, [0x3F81BF80]),
        ("F2FP.BF16.F32.PACK_AB.RM R4, R2, R3",
         {2: _f32(1 + 2**-20), 3: _f32(-(1 + 2**-20))}, [0x3F80BF81]),
        ("F2FP.F16.F32.PACK_AB.RZ R4, R2, R3", {2: _f32(1e6), 3: _f32(-1e6)}, [0x7BFFFBFF]),
    ],
)  # fmt: skip
def test_every_conversion_to_half_precision_takes_its_rounding_mode(
    text: str, regs: dict[int, list[int]], want: list[int]
) -> None:
    """I2F, F2F and F2FP to F16 and BF16 round in the mode the instruction names (hand-worked
    values, IEEE 754's roundings)."""
    assert _one(text, regs) == want


@pytest.mark.parametrize(
    ("text", "regs", "want"),
    [
        # 2^60 + 2^36 + 1 lies just above the tie between the floats 2^60 and 2^60 + 2^37:
        # the nearest double, 2^60 + 2^36, is that tie, which rounds to even (2^60) once more
        ("I2F.F32.S64 R4, R2", {2: [1, 0xFFFFFFFF], 3: [0x10000010, 0xEFFFFFEF]},
         [0x5D800001, 0xDD800001]),
        # 2^64 - 1 toward zero is the float below 2^64 (the nearest double is 2^64 itself)
        ("I2F.F32.U64.RZ R4, R2", {2: [0xFFFFFFFF, 3], 3: [0xFFFFFFFF, 0]},
         [0x5F7FFFFF, 0x40400000]),
        # 2^62 - 1 toward zero is the bfloat16 below 2^62, (2 - 2^-7) x 2^61
        ("I2F.BF16.S64.RZ R4, R2", {2: [0xFFFFFFFF], 3: [0x3FFFFFFF]}, [0x5E7F]),
    ],
)  # fmt: skip
def test_a_64_bit_integer_rounds_once_to_a_narrower_float(
    text: str, regs: dict[int, list[int]], want: list[int]
) -> None:
    """I2F from S64 or U64 past 2^53 rounds the integer itself, not its nearest double
    (hand-worked values)."""
    assert _one(text, regs) == want


@pytest.mark.parametrize(
    ("text", "regs", "want"),
    [
        # 2^64 - 1: to nearest 2^64 itself; toward zero the double below it, 2^64 - 2^11
        ("I2F.F64.U64 R4, R2", {2: [0xFFFFFFFF], 3: [0xFFFFFFFF]}, [0x43F0000000000000]),
        ("I2F.F64.U64.RZ R4, R2", {2: [0xFFFFFFFF], 3: [0xFFFFFFFF]}, [0x43EFFFFFFFFFFFFF]),
        # 2^53 + 1 lies halfway between the doubles 2^53 and 2^53 + 2 (to nearest: 2^53)
        ("I2F.F64.S64.RP R4, R2", {2: [1], 3: [0x00200000]}, [0x4340000000000001]),
        ("I2F.F64.S64.RM R4, R2", {2: [1], 3: [0x00200000]}, [0x4340000000000000]),
        # -(2^53 + 1) toward -inf is -(2^53 + 2), toward +inf -2^53
        ("I2F.F64.S64.RM R4, R2", {2: [0xFFFFFFFF], 3: [0xFFDFFFFF]}, [0xC340000000000001]),
        ("I2F.F64.S64.RP R4, R2", {2: [0xFFFFFFFF], 3: [0xFFDFFFFF]}, [0xC340000000000000]),
        # 2^53 + 3: to nearest 2^53 + 4 (the even one), toward zero 2^53 + 2
        ("I2F.F64.S64.RZ R4, R2", {2: [3], 3: [0x00200000]}, [0x4340000000000001]),
    ],
)  # fmt: skip
def test_a_64_bit_integer_rounds_to_a_double_in_the_mode_named(
    text: str, regs: dict[int, list[int]], want: list[int]
) -> None:
    """I2F.F64 from S64 or U64 past 2^53 rounds in the mode the instruction names (it took
    the nearest double in every mode; hand-worked values)."""
    low, high = _one(text, regs), _one(text, regs, out=5)
    got = [lo | hi << 32 for lo, hi in zip(low, high, strict=True)]
    assert got == want
