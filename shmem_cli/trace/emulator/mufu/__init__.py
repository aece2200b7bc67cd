"""The special function unit (``MUFU``) as the H200 computes it, bit for bit: the float32
functions of :mod:`.interpolate` (``RCP``, ``RSQ``, ``SQRT``, ``EX2``, ``LG2``, ``SIN``,
``COS``), ``TANH`` and its half and bf16 forms (:mod:`.tanh`), and the double seeds
``RCP64H``/``RSQ64H`` (:mod:`.seeds`). Measured samples: tests/data/trace/mufu."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .interpolate import NAN, cos, ex2, lg2, rcp, rsq, sin, sqrt
from .seeds import rcp64h, rsq64h
from .tanh import tanh, tanh_bf16, tanh_f16

__all__ = ["FUNCTIONS", "HALF_FUNCTIONS", "NAN", "cos", "ex2", "lg2", "pick", "rcp", "rcp64h"]
__all__ += ["rsq", "rsq64h", "sin", "sqrt", "tanh", "tanh_bf16", "tanh_f16"]

#: each MUFU function of a register's 32 bits (the seeds: of a double's high word)
FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "RCP": rcp,
    "RSQ": rsq,
    "SQRT": sqrt,
    "EX2": ex2,
    "LG2": lg2,
    "SIN": sin,
    "COS": cos,
    "TANH": tanh,
    "RCP64H": rcp64h,
    "RSQ64H": rsq64h,
}

#: the 16-bit forms (``MUFU.fn.F16``/``.BF16``): a function of one half of the register
#: (the high one where the operand says ``.H1``), its result in the low half
HALF_FUNCTIONS: dict[tuple[str, str], Callable[[Any, bool], Any]] = {
    ("TANH", "F16"): tanh_f16,
    ("TANH", "BF16"): tanh_bf16,
}


def pick(mods: tuple[str, ...], high: bool = False) -> Callable[[Any], Any] | None:
    """The function an instruction's modifiers name (``("TANH", "F16")``: ``MUFU.TANH.F16``,
    of the high half where ``high``), None where it names none the H200 was measured on."""
    name = next((m for m in mods if m in FUNCTIONS), None)
    width = next((m for m in mods if m in ("F16", "BF16")), None)
    if name is None or width is None:
        return None if name is None else FUNCTIONS[name]
    half = HALF_FUNCTIONS.get((name, width))
    if half is None:
        return None

    def of_half(bits: Any) -> Any:
        return half(bits, high)

    return of_half
