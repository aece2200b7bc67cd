"""Reading ``cuobjdump -sass`` output and checking the measured instruction.

A verification kernel is only evidence if the compiler emitted exactly the
shared-memory instruction the access describes: the right kind (LDS, STS,
ATOMS, LDSM, STSM) and the right width (``LDS.128`` for a float4 load, not two
``LDS.64``), and no other traffic: no second shared-memory instruction, no
local-memory spill, no global access before the measured region has ended.
"""

from __future__ import annotations

import os
import re
from collections import Counter

from ..cuda import sass as listing
from ..cuda.sass_operands import Reg
from ..hardware import ops
from ..plumbing.bounded_read import text_lines
from ..plumbing.errors import ShmemError, SourcePos
from ..plumbing.frozen import frozen

_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
BARRIER = re.compile(r"^BAR(\.|\Z)")


@frozen
class Instruction:
    """One SASS instruction: its byte offset, guard predicate (``@P0`` or ``""``) and opcode."""

    offset: int
    guard: str
    opcode: str  # with its modifiers, e.g. LDS.U16

    @property
    def shared(self) -> bool:
        """Whether it is a shared-memory op (the op vocabulary decides)."""
        return ops.op_of_opcode(self.opcode.split(".", 1)[0]) is not None


def _guard(reg: Reg | None) -> str:
    if reg is None:
        return ""
    index = "T" if reg.is_true else str(reg.index)
    return f"@{'!' if reg.not_ else ''}{reg.kind}{index}"


#: instructions kept from one dump: cuobjdump writes two lines of about 85 bytes each, so
#: a dump of MAX_DUMP_BYTES holds about 400,000; each kept costs some 250 bytes (4.4 million
#: one-line NOPs, a 128 KiB gzip, held 1.2 GiB before this bound)
MAX_INSTRUCTIONS = 1_000_000


def parse_sass(text: str, where: str = "<SASS dump>") -> dict[str, list[Instruction]]:
    """Instructions per function of a ``cuobjdump -sass`` listing, each line read by the
    trace front end's SASS reader (:func:`shmem_cli.cuda.sass.parse_head`: the offset, guard
    and opcode, not the operands, which took 25 microseconds and more an instruction and
    minutes for a dump of long operand lists); at most :data:`MAX_INSTRUCTIONS` of them,
    else an error at the line past the bound."""
    functions: dict[str, list[Instruction]] = {}
    current: list[Instruction] | None = None
    kept = 0
    for n, line in enumerate(text_lines(text), 1):
        m = _FUNCTION.match(line)
        if m:
            current = functions.setdefault(m.group(1), [])
            continue
        if current is None:
            continue
        ins = listing.parse_head(line)
        if ins is not None:
            if kept == MAX_INSTRUCTIONS:
                raise ShmemError(
                    f"the SASS dump holds more than {MAX_INSTRUCTIONS:,} instructions: give "
                    "the sass.txt that run.sh or --keep wrote for these specs "
                    "(cuobjdump -sass of their benchmark)",
                    path=where,
                    pos=SourcePos(n, 1),
                    code="sass",
                )
            kept += 1
            current.append(Instruction(ins[0], _guard(ins[1]), ins[2]))
    return functions


#: The largest SASS dump read, plain or unpacked from gzip.
MAX_DUMP_BYTES = 64 << 20


def read_dump(path: str | os.PathLike[str]) -> str:
    """A SASS dump as text; a gzip-compressed dump (``sass.txt.gz``) is unpacked.

    Regular files only, at most MAX_DUMP_BYTES (unpacked); raises ShmemError.
    """
    from ..plumbing.bounded_read import read_bounded

    data = read_bounded(
        path, MAX_DUMP_BYTES, what="the SASS dump", code="sass", gunzip=True, text=True
    )
    return data.decode("utf-8", errors="replace")


def shared_opcodes(instructions: list[Instruction]) -> Counter[str]:
    """How often each shared-memory opcode occurs in a function's code."""
    return Counter(i.opcode for i in instructions if i.shared)


@frozen
class Expected:
    """The shared-memory instruction an access must compile to, e.g. ``LDS.128``."""

    opcodes: tuple[str, ...]  # accepted spellings (signedness of sub-word loads may vary)

    @property
    def label(self) -> str:
        return "/".join(self.opcodes)


#: how SASS spells each width of a plain load or store (a 4-byte access has no modifier)
_WIDTH_SPELLINGS = {1: ("U8", "S8"), 2: ("U16", "S16"), 4: ("",), 8: ("64",), 16: ("128",)}


def expected_instruction(
    op: str, size: int, *, atomic: str = "inc", matrices: int = 1, trans: bool = False
) -> Expected:
    """The SASS opcode of an access: ``op`` and ``size`` (bytes per lane) as in the spec."""
    kind = ops.get(op)
    stem = kind.sass[0]
    if kind.atomic:  # a wider one: the same SASS with its width (ATOMS.EXCH.128)
        wide = _WIDTH_SPELLINGS[size][0] if size > 4 else ""
        return Expected(tuple(f"{s}.{wide}" if wide else s for s in ops.atomic(atomic).sass))
    if kind.matrix:
        shape = "MT88" if trans else "M88"
        count = "" if matrices == 1 else f".{matrices}"
        return Expected((f"{stem}.16.{shape}{count}",))
    return Expected(tuple(f"{stem}.{w}" if w else stem for w in _WIDTH_SPELLINGS[size]))


@frozen
class Verdict:
    """Whether a kernel measures what it claims; ``reason`` says why not."""

    ok: bool
    found: str  # the shared-memory opcodes found, e.g. "LDS.128" or "LDS.64 x2"
    reason: str = ""
    predicated: bool = False  # the measured instruction carries a guard predicate


def describe(counts: Counter[str]) -> str:
    if not counts:
        return "none"
    return ", ".join(op if n == 1 else f"{op} x{n}" for op, n in sorted(counts.items()))


def check(instructions: list[Instruction] | None, expected: Expected) -> Verdict:
    """Check one kernel's SASS against the instruction its access should compile to."""
    if instructions is None:
        return Verdict(False, "none", "the kernel is not in the SASS dump")
    counts = shared_opcodes(instructions)
    found = describe(counts)
    want = [i for i in instructions if i.opcode in expected.opcodes]
    others = {op: n for op, n in counts.items() if op not in expected.opcodes}
    if not want:
        return Verdict(False, found, f"the compiler emitted {found} instead of {expected.label}")
    if others:
        return Verdict(
            False,
            found,
            f"besides {expected.label} the kernel has {describe(Counter(others))}, "
            "which would be counted too",
        )
    spelled = {i.opcode for i in want}
    if len(spelled) > 1:
        return Verdict(False, found, f"the access compiled to several forms: {found}")
    last_shared = max(i.offset for i in instructions if i.shared)
    barriers = [i.offset for i in instructions if BARRIER.match(i.opcode)]
    for ins in instructions:
        if ins.opcode.split(".", 1)[0] not in ops.GLOBAL_OR_LOCAL_OPCODES:
            continue
        fenced = ins.opcode.startswith("STG") and any(
            last_shared < b < ins.offset for b in barriers
        )
        if not fenced:
            return Verdict(
                False,
                found,
                f"{ins.opcode} at 0x{ins.offset:04x} moves global or local memory while the "
                "measured instruction runs",
            )
    return Verdict(True, found, predicated=any(i.guard for i in want))
