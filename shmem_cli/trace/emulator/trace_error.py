"""The emulator's one error: it cannot go on, located at the instruction's source line
(:class:`NotModelled` where an instruction is beyond it, whatever the launch)."""

from __future__ import annotations

from ...cuda.sass import Instruction
from ...plumbing.errors import ShmemError, SourcePos


class TraceError(ShmemError):
    """The emulator cannot go on: located at the instruction's source line where known.
    ``gives_data``: the message already says how to give the launch's data (an ``--arg``,
    ``--params``, ``--buffer-size`` or ``--memory`` option), so a launch adds no note of
    its own on how to give parameters left at 0 (:func:`..kernel.launch.name_defaults`)."""

    def __init__(
        self, message: str, ins: Instruction | None = None, *, gives_data: bool = False
    ) -> None:
        where = f" [{ins.where}]" if ins is not None else ""
        pos = SourcePos(ins.line, 1) if ins is not None and ins.line else None
        super().__init__(message + where, path=ins.file if ins else None, pos=pos, code="trace")
        self.gives_data = gives_data


class NotModelled(TraceError):
    """An instruction (or special register) the emulator does not model: no launch value
    would change that, so its error names no parameter left at 0."""


#: what a step's own fault raises (NumPy and Python on values no rule foresaw): said as an
#: internal emulator error at the instruction, never a traceback
INTERNAL_ERRORS = (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError)
