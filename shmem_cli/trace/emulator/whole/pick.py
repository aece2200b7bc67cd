"""Which whole step (:mod:`.`) an instruction has, if any."""

from __future__ import annotations

from ....cuda.sass import Instruction
from ..op_table import Context, Step
from .floats import float_step
from .rows import WholeStep
from .shared import shared_step


def whole_step(ins: Instruction, ctx: Context, general: Step) -> WholeStep | None:
    """The whole step of ``ins`` (decoded, whose own step is ``general``), or None."""
    if ins.guard is not None and not (ins.guard.index == 7 and not ins.guard.not_):
        return None  # (a straight run holds none: _straight_runs)
    return float_step(ins, general) or shared_step(ins, ctx, general)
