"""Parse the text nvdisasm prints (``nvdisasm -c -g``) into functions and instructions.

Every instruction line keeps its byte address, guard predicate, opcode with its
modifiers, operands parsed into typed objects, the source file and line of the
``//## File "...", line N`` comment before it, and its original text. Syntax this
module does not know is a :class:`SassSyntaxError` naming the text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..plumbing.errors import one_line
from ..plumbing.frozen import frozen
from .sass_operands import (
    Operand,
    Reg,
    SassSyntaxError,
    parse_operand,
    split_operands,
)

#: source locations (file, line), the innermost first
Locations = tuple[tuple[str, int], ...]


@frozen
class Instruction:
    pc: int  # byte address inside the function
    guard: Reg | None  # @P0, @!UP1; None when unguarded
    opcode: str  # the base opcode, e.g. ISETP
    mods: tuple[str, ...]  # modifiers in order, e.g. ("GE", "U32", "AND")
    operands: tuple[Operand, ...]
    file: str | None
    line: int | None
    text: str
    # why the text did not parse (then opcode holds the first word and operands are empty):
    # the emulator fails only when a thread reaches it
    error: str | None = None
    #: the source locations nvdisasm prints before it (``-gi``), the innermost first: one
    #: per level of inlining (``line 11 inlined at ... line 15``, ..., ``line 43``);
    #: ``file``/``line`` are the last of them
    locations: Locations = ()
    #: the user's other lines this instruction's inlined library code may come from, where
    #: the line table cannot tell (:mod:`.inline_siblings`); the reported line is ptxas's pick
    siblings: Locations = ()
    #: the user's own line that called the reported line's code through inlining (a helper's
    #: ``ldmatrix`` asm placed at its line, called from the kernel's line 63): the next of the
    #: user's lines out along the chain; None where there is none, or where the chain cannot
    #: be told from a sibling call's (``siblings``)
    caller: tuple[str, int] | None = None

    @property
    def user_location(self) -> tuple[str, int] | None:
        """The source line to report: the innermost location outside the CUDA toolkit's
        and Triton's library headers (the user's ``atomicAdd(...)`` rather than the header
        that implements it)."""
        if not self.locations:
            return None
        user = [c for c in self.locations if not TOOLKIT_HEADER.search(c[0])]
        return (user or self.locations)[0]

    @property
    def name(self) -> str:
        """Opcode with its modifiers, e.g. ``ISETP.GE.U32.AND``."""
        return ".".join((self.opcode, *self.mods))

    @property
    def where(self) -> str:
        loc = f" ({one_line(self.file)}:{self.line})" if self.file else ""
        return f"{self.text} at pc 0x{self.pc:04x}{loc}"


@dataclass
class Function:
    """One code section: the kernel and the subroutines nvdisasm prints inside it."""

    name: str  # mangled
    instructions: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)  # label -> byte pc

    def index_of(self, pc: int) -> int:
        """The position of the instruction at byte address ``pc``."""
        lookup = self._pc_index()
        if pc not in lookup:
            raise SassSyntaxError(f"{self.name}: no instruction at pc 0x{pc:x}")
        return lookup[pc]

    def _pc_index(self) -> dict[int, int]:
        cached: dict[int, int] | None = getattr(self, "_pcs", None)
        if cached is None:
            cached = {ins.pc: i for i, ins in enumerate(self.instructions)}
            self._pcs = cached
        return cached


# --- lexing -----------------------------------------------------------------------------

_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
_HEADER = re.compile(r"^//-+ \.text\.(\S+)\s+-+$")
_FILE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
_LABEL = re.compile(r"^([.$\w]+):\s*$")
# an instruction line; ptxas may append an annotation such as (*"SpillRefill"*)
# headers of the CUDA toolkit (atomics, intrinsics, cooperative groups, CUB) and Triton's own
# library (tl.max, tl.sum in triton/language/standard.py): a location there says less than
# the user's line that called it
TOOLKIT_HEADER = re.compile(
    r"/targets/[^/]+/include/|/cuda[^/]*/include/|/nvidia/[^/]+/include/|/triton/language/"
)
# an instruction line's offset; its text is what follows, less (from the right) the encoding
# comment /* ... */, blanks, the ';', blanks, such an annotation and blanks (_instruction_text:
# one pass; the one regular expression it was took cubic time in a run of blanks)
_PC = re.compile(r"\s*/\*([0-9a-fA-F]+)\*/\s")
_ANNOTATION = re.compile(r'\(\*"[^"]*"\*\)\Z')
_GUARD = re.compile(r"^@(!?)(U?P)(T|\d)\s+")


def parse(text: str) -> list[Function]:
    """All code sections of ``nvdisasm -c -g`` output, in order."""
    functions: list[Function] = []
    current: Function | None = None
    file: str | None = None
    line: int | None = None
    # the locations before the next instruction, grown in place and made a tuple once (a
    # tuple made anew for each of 40,000 locations before one instruction: 3.9 s, quadratic)
    chain: list[tuple[str, int]] = []
    locations: tuple[tuple[str, int], ...] | None = ()
    fresh = True  # the next location starts a new chain
    for raw in text.splitlines():
        section = _SECTION.match(raw)
        if section:
            current = Function(section.group(1))
            functions.append(current)
            file = line = None
            chain, locations, fresh = [], (), True
            continue
        if current is None:
            continue
        loc = _FILE.match(raw)
        if loc:
            file, line = loc.group(1), int(loc.group(2))
            if fresh:
                chain = []
            chain.append((file, line))
            locations, fresh = None, False
            continue
        label = _LABEL.match(raw.strip())
        if label:
            nxt = current.instructions[-1].pc + 16 if current.instructions else 0
            current.labels[label.group(1)] = nxt
            continue
        if locations is None:
            locations = tuple(chain)
        ins = parse_line(raw, file, line, locations)
        if ins is not None:
            current.instructions.append(ins)
            fresh = True
    for fn in functions:
        _check_labels(fn)
    return functions


def _check_labels(fn: Function) -> None:
    """A label printed after the last instruction points past the end; keep it (size marker)."""
    if fn.instructions:
        end = fn.instructions[-1].pc + 16
        for name, pc in fn.labels.items():
            if pc > end:
                raise SassSyntaxError(f"{fn.name}: label {name} points outside the function")


def parse_line(
    raw: str, file: str | None = None, line: int | None = None, locations: Locations = ()
) -> Instruction | None:
    """The instruction of one listing line (``/*0040*/  LDS R4, [R2] ;  /* 0x... */``, as
    nvdisasm and cuobjdump print it); None for a line that holds none."""
    m = _PC.match(raw)
    if m is None:
        return None
    pc = int(m.group(1), 16)
    body = _instruction_text(raw[m.end() :])
    try:
        return parse_instruction(body, pc, file, line, locations)
    except SassSyntaxError as exc:  # kept, so that only running it fails
        text = body.strip().rstrip(";").strip()
        words = _GUARD.sub("", text).split()
        opcode, *mods = (words[0] if words else "?").split(".")
        return Instruction(
            pc, None, opcode, tuple(mods), (), file, line, text, exc.message, locations
        )


def parse_head(raw: str) -> tuple[int, Reg | None, str] | None:
    """The offset, guard and opcode with its modifiers (``LDS.U16``) of one listing line,
    its operands not read (:func:`parse_line` reads them too, at 25 microseconds or more an
    instruction): what ``shmem verify`` checks of a dump anyone may give it; None for a line
    that holds no instruction."""
    m = _PC.match(raw)
    if m is None:
        return None
    text = _instruction_text(raw[m.end() :]).strip().rstrip(";").strip()
    guard: Reg | None = None
    g = _GUARD.match(text)
    if g:
        guard = Reg(g.group(2), 7 if g.group(3) == "T" else int(g.group(3)), not_=g.group(1) == "!")
        text = text[g.end() :]
    words = text.split(None, 1)
    return int(m.group(1), 16), guard, words[0] if words else "?"


def _instruction_text(rest: str) -> str:
    """The instruction of a line's ``rest`` after its offset: without the encoding comment
    (from the first ``/*`` where the line ends with ``*/``), then, from the right, blanks,
    one ``;``, blanks, an annotation ``(*"..."*)`` and blanks. In time linear in the line:
    a listing given to ``shmem verify`` is anyone's text."""
    text = rest.rstrip()
    start = text.find("/*")
    if start >= 0 and text.endswith("*/") and len(text) - start >= 4:
        text = text[:start].rstrip()
    text = text.removesuffix(";").rstrip()
    annotation = _ANNOTATION.search(text) if text.endswith('"*)') else None
    return (text[: annotation.start()] if annotation else text).rstrip()


#: branches through a register that nvdisasm prints as ``Ra offset`` without a comma
#: (``BRX R6 -0x10f0``, ``RET.ABS.NODEC R20 0x0``): read as two operands
_REGISTER_PLUS_OFFSET = frozenset(("BRX", "JMX", "RET", "CALL", "JMP"))
_REG_OFFSET = re.compile(r"^(R\d+|RZ)\s+(-?0x[0-9a-fA-F]+)$")


def parse_instruction(
    body: str, pc: int, file: str | None, line: int | None, locations: Locations = ()
) -> Instruction:
    """One instruction from its text without the ``/*pc*/`` prefix and the ``;``."""
    text = body.strip().rstrip(";").strip()
    rest = text
    guard: Reg | None = None
    g = _GUARD.match(rest)
    if g:
        kind = g.group(2)
        idx = 7 if g.group(3) == "T" else int(g.group(3))
        guard = Reg(kind, idx, not_=g.group(1) == "!")
        rest = rest[g.end() :]
    parts = rest.split(None, 1)
    if not parts:
        raise SassSyntaxError(f"empty instruction at pc 0x{pc:04x}")
    opcode, *mods = parts[0].split(".")
    ops_text = parts[1] if len(parts) > 1 else ""
    if opcode in _REGISTER_PLUS_OFFSET:
        ops_text = _REG_OFFSET.sub(r"\1, \2", ops_text)
    try:
        operands = tuple(parse_operand(t) for t in split_operands(ops_text))
    except SassSyntaxError as exc:
        where = f" ({one_line(file)}:{line})" if file else ""
        raise SassSyntaxError(f"{exc.message} in '{text}' at pc 0x{pc:04x}{where}") from None
    return Instruction(pc, guard, opcode, tuple(mods), operands, file, line, text, None, locations)


#: the SASS text of the one function a trace parses (about 130,000 instructions with their
#: line table): a kernel larger than that is refused, not parsed for minutes
MAX_FUNCTION_TEXT = 8 << 20
_ANY_SECTION = re.compile(r"^[ \t]*\.section[ \t]", re.M)


def function_section(text: str, name: str) -> str | None:
    """The part of nvdisasm's ``text`` that holds the function ``name``: its ``.section``
    line up to the next section (found in one pass, the other functions never parsed);
    None when the text has no such function."""
    head = re.compile(r"^[ \t]*\.section[ \t]+\.text\." + re.escape(name) + r"[,\s]", re.M)
    m = head.search(text)
    if m is None:
        return None
    end = _ANY_SECTION.search(text, m.end())
    return text[m.start() : end.start() if end else len(text)]


_CODE_SECTION = re.compile(r"^[ \t]*\.section[ \t]+\.text\.([^,\s]+)[,\s]", re.M)


def function_sections(text: str) -> dict[str, str]:
    """:func:`function_section` of every function of ``text``, found in one pass (asking for
    each of thousands of functions in turn scanned the text each time: minutes)."""
    heads = [m.start() for m in _ANY_SECTION.finditer(text)]
    out: dict[str, str] = {}
    for k, start in enumerate(heads):
        m = _CODE_SECTION.match(text, start)
        if m is not None and m.group(1) not in out:
            out[m.group(1)] = text[start : heads[k + 1] if k + 1 < len(heads) else len(text)]
    return out


def find_function(functions: list[Function], name: str) -> Function:
    for fn in functions:
        if fn.name == name:
            return fn
    known = ", ".join(f.name for f in functions) or "none"
    raise SassSyntaxError(f"no function '{name}' in the disassembly (found: {known})")


def source_lines(
    fn: Function,
    user: Callable[[str], bool] | None = None,
    first: Callable[[str], bool] | None = None,
) -> dict[int, tuple[str, int]]:
    """pc -> the source line to report, for every instruction of ``fn`` the line table
    places: the innermost location in a file ``first`` takes (a binary's compiled sources:
    :mod:`shmem_cli.trace.user_lines`) where it is given and one is in the chain, else the
    innermost in the user's own sources (``user(file)``: in the kernel's source tree, not in
    a library's include folder) where ``user`` is given and one is in the chain, else
    :attr:`Instruction.user_location`."""
    out = {}
    for ins in fn.instructions:
        where = ins.user_location
        for mine in (user, first):  # the later, the more preferred
            own = [c for c in ins.locations if mine(c[0])] if mine is not None else []
            where = own[0] if own else where
        if where is not None:
            out[ins.pc] = where
    return out


def line_table_files(text: str) -> list[str]:
    """The source files the line table of ``nvdisasm -g`` text names, in order of first
    mention."""
    seen: dict[str, None] = {}
    for raw in text.splitlines():
        loc = _FILE.match(raw)
        if loc and loc.group(1):
            seen.setdefault(loc.group(1), None)
    return list(seen)
