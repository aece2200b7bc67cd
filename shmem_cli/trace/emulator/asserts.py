"""What a failed ``assert()`` said, for the error that stops the trace at its call, and what
a ``printf`` before a ``__trap()`` printed (llm.c's ``printf("Number of channels is not a
multiple of 32 * x128::size"); __trap();``), for the error at the trap.

nvcc calls ``__assertfail(message, file, line, function, char_size)`` with the arguments in
R4:R5, R6:R7, R8, R10:R11 and R12:R13; the strings lie in the module's global data, which
the launch loads as the driver does (:mod:`..kernel.externals`). The error quotes the
asserted expression and its file and line (CuTe's ``CUTE_INVALID_CONTROL_PATH`` asserts
``0 && "Attempting to use wgmma.fence without CUTE_ARCH_MMA_SM90A_ENABLED"`` in a build that
lacks the architecture-specific target), and where the expression names such a target
(``SM90A``) says to trace a build for it rather than to check the launch.
"""

from __future__ import annotations

import re

from ...cuda.sass import Instruction
from ...plumbing.errors import shorten
from .state import Block, Idx, TraceError

#: the most bytes of the message and of the file name read
MAX_SAID = 300
#: an architecture-specific target named in the expression (``SM90A``, ``sm_90a``)
_TARGET = re.compile(r"(?<![A-Za-z0-9])sm_?(\d{2,3})a(?![A-Za-z0-9])", re.IGNORECASE)


def failed_assert(b: Block, ix: Idx, ins: Instruction) -> TraceError:
    """The located error of a call to ``__assertfail`` by the threads ``ix``, quoting what
    the first of them asserted where its arguments can be read."""
    t = int(b.ids(ix)[0])
    expression = _string(b, _pointer(b, 4, t))
    file = _string(b, _pointer(b, 6, t))
    said = ""
    if expression is not None:
        where = f" at {file.rsplit('/', 1)[-1]}:{int(b.r[8][t])}" if file else ""
        said = f" (assert({shorten(expression, 200)}){where})"
    target = _TARGET.search(expression or "")
    failed = f"the kernel calls a function outside it, __assertfail: an assert() failed{said}"
    if target is None:
        return TraceError(
            f"{failed}, so this launch breaks the kernel's assumption at this line: check "
            "--block, --grid and --arg against it",
            ins,
            gives_data=True,
        )
    arch = f"sm_{target.group(1)}a"
    return TraceError(
        f"{failed}: the code path asserted on is the one a build without {arch}, the "
        f"architecture-specific target, takes; trace a build for it (--arch {arch}, or leave "
        "--arch out for a .cu: shmem chooses it where the code needs it)",
        ins,
        gives_data=True,
    )


def printed(b: Block, ix: Idx) -> str | None:
    """The format a call to ``vprintf(format, args)`` by the threads ``ix`` prints (R4:R5,
    the first thread's), where it can be read."""
    return _string(b, _pointer(b, 4, int(b.ids(ix)[0])))


def trapped(b: Block, ins: Instruction) -> TraceError:
    """The located error of a trap (``BPT.TRAP``: ``__trap()``, or a trap nvcc put in),
    quoting what the block's last ``printf`` printed where one ran before it."""
    said = "the kernel reached a breakpoint or trap (assert or __trap())"
    if b.printed is None:
        return TraceError(said, ins)
    return TraceError(
        f"{said} after it printed {shorten(b.printed, 200)!r}: the kernel's own check "
        "failed, so this launch breaks its assumption: check --block, --grid, --dynamic-smem "
        "and --arg against it",
        ins,
        gives_data=True,
    )


def _pointer(b: Block, reg: int, t: int) -> int:
    return int(b.r[reg][t]) | int(b.r[reg + 1][t]) << 32


def _string(b: Block, address: int) -> str | None:
    raw = b.launch.memory.c_string(address, MAX_SAID) if address else None
    if not raw:
        return None
    text = raw.decode("utf-8", "replace").strip()  # (a printf's closing newline)
    return "".join(c if c.isprintable() else "?" for c in text)
