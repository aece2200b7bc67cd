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
from dataclasses import dataclass

_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_INSTRUCTION = re.compile(
    r"^\s*/\*(?P<offset>[0-9a-fA-F]{4,})\*/\s+(?P<guard>@!?U?P(?:T|\d+)\s+)?(?P<opcode>[A-Z][A-Z0-9_.]*)"
)
SHARED = re.compile(r"^(LDS|STS|ATOMS|LDSM|STSM|LDGSTS)(\.|\Z)")
# instructions that move data through the L1TEX pipe other than shared memory
GLOBAL_OR_LOCAL = re.compile(r"^(LDG|STG|LDL|STL|LD|ST|ATOM|ATOMG|RED|REDG|LDGSTS)(\.|\Z)")
BARRIER = re.compile(r"^BAR(\.|\Z)")


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: its byte offset, guard predicate (``@P0`` or ``""``) and opcode."""

    offset: int
    guard: str
    opcode: str

    @property
    def shared(self) -> bool:
        return bool(SHARED.match(self.opcode))


def parse_sass(text: str) -> dict[str, list[Instruction]]:
    """Instructions per function of a ``cuobjdump -sass`` (or ``nvdisasm``) listing."""
    functions: dict[str, list[Instruction]] = {}
    current: list[Instruction] | None = None
    for line in text.splitlines():
        m = _FUNCTION.match(line)
        if m:
            current = functions.setdefault(m.group(1), [])
            continue
        if current is None:
            continue
        m = _INSTRUCTION.match(line)
        if m:
            guard = (m.group("guard") or "").strip()
            current.append(Instruction(int(m.group("offset"), 16), guard, m.group("opcode")))
    return functions


#: The largest SASS dump read, plain or unpacked from gzip.
MAX_DUMP_BYTES = 64 << 20


def read_dump(path: str | os.PathLike[str]) -> str:
    """A SASS dump as text; a gzip-compressed dump (``sass.txt.gz``) is unpacked.

    Regular files only, at most MAX_DUMP_BYTES (unpacked); raises ShmemError.
    """
    from ..plumbing.bounded_read import read_bounded

    data = read_bounded(path, MAX_DUMP_BYTES, what="the SASS dump", code="sass", gunzip=True)
    return data.decode("utf-8", errors="replace")


def shared_opcodes(instructions: list[Instruction]) -> Counter[str]:
    """How often each shared-memory opcode occurs in a function's code."""
    return Counter(i.opcode for i in instructions if i.shared)


@dataclass(frozen=True)
class Expected:
    """The shared-memory instruction an access must compile to, e.g. ``LDS.128``."""

    opcodes: tuple[str, ...]  # accepted spellings (signedness of sub-word loads may vary)

    @property
    def label(self) -> str:
        return "/".join(self.opcodes)


_LOADS = {
    1: ("LDS.U8", "LDS.S8"),
    2: ("LDS.U16", "LDS.S16"),
    4: ("LDS",),
    8: ("LDS.64",),
    16: ("LDS.128",),
}
_STORES = {
    1: ("STS.U8", "STS.S8"),
    2: ("STS.U16", "STS.S16"),
    4: ("STS",),
    8: ("STS.64",),
    16: ("STS.128",),
}
_ATOMICS = {
    "inc": ("ATOMS.POPC.INC.32",),
    "add": ("ATOMS.ADD", "ATOMS.ADD.32"),
    "exch": ("ATOMS.EXCH",),
}


def expected_instruction(
    op: str, size: int, *, atomic: str = "inc", matrices: int = 1, trans: bool = False
) -> Expected:
    """The SASS opcode of an access: ``op`` and ``size`` (bytes per lane) as in the spec."""
    if op == "load":
        return Expected(_LOADS[size])
    if op == "store":
        return Expected(_STORES[size])
    if op == "atomic":
        return Expected(_ATOMICS[atomic])
    if op in ("ldmatrix", "stmatrix"):
        stem = "LDSM" if op == "ldmatrix" else "STSM"
        shape = "MT88" if trans else "M88"
        count = "" if matrices == 1 else f".{matrices}"
        return Expected((f"{stem}.16.{shape}{count}",))
    raise ValueError(f"unknown op {op!r}")


@dataclass(frozen=True)
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
        if not GLOBAL_OR_LOCAL.match(ins.opcode):
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
