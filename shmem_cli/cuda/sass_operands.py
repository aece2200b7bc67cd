"""The operands of a SASS instruction as nvdisasm prints them, parsed into typed objects:
registers, immediates, constant-bank references, memory references, labels, special
registers, braced lists and wgmma descriptors (:func:`parse_operand`). Text this module
does not know is a :class:`SassSyntaxError` naming it."""

from __future__ import annotations

import re

from ..plumbing.errors import ShmemError
from ..plumbing.frozen import frozen


class SassSyntaxError(ShmemError):
    """A line of disassembly this parser does not understand."""


# --- operands ---------------------------------------------------------------------------


@frozen
class Reg:
    """A register: ``kind`` is R, UR, P, UP, B (convergence barrier) or SB (scoreboard).

    ``index`` is the register number; RZ is 255, URZ 63, PT and UPT 7. ``neg`` is a leading
    ``-``, ``inv`` a leading ``~``, ``not_`` a leading ``!``, ``abs`` is ``|R|``; ``sel`` holds
    selectors such as ``H1``, ``H0_H0``, ``B2``, ``X4``, ``64`` and ``reuse`` is dropped.
    """

    kind: str
    index: int
    neg: bool = False
    inv: bool = False
    not_: bool = False
    abs: bool = False
    sel: tuple[str, ...] = ()

    @property
    def is_zero(self) -> bool:
        return (self.kind == "R" and self.index == 255) or (self.kind == "UR" and self.index == 63)

    @property
    def is_true(self) -> bool:
        return self.kind in ("P", "UP") and self.index == 7


@frozen
class Imm:
    """An immediate as printed: ``text``, with its integer value (None if not an integer)
    and its value as a float."""

    text: str
    int_value: int | None
    float_value: float
    neg: bool = False
    abs: bool = False
    # half of an address the driver fills in at load (``32@lo($str)``, ``32@hi(sym)``): the
    # symbol it names; its value (0 here) is unknown
    reloc: str | None = None


@frozen
class Const:
    """``c[bank][offset]`` or ``c[bank][R3+0x10]`` (``reg`` set) or ``cx[UR4][...]``."""

    bank: int
    offset: int
    reg: Reg | None = None
    neg: bool = False
    inv: bool = False
    abs: bool = False
    sel: tuple[str, ...] = ()


@frozen
class Mem:
    """A memory reference ``[R8.64+UR4+0x80]``; ``desc`` is the ``desc[UR8]`` register.

    ``reg`` may carry the selectors ``64`` (64-bit address pair) and ``X4``/``X8``/``X16``
    (scaled index); ``ureg`` is a uniform register added to the address.
    """

    reg: Reg | None
    ureg: Reg | None
    offset: int
    desc: Reg | None = None


@frozen
class Label:
    """A branch target, e.g. ``.L_x_0``."""

    name: str


@frozen
class Special:
    """A special register such as ``SR_TID.X`` or ``SR_CgaCtaId``, or ``SRZ``."""

    name: str


@frozen
class Braced:
    """A ``{...}`` list of operands (DEPBAR's scoreboard list)."""

    items: tuple[str, ...]


@frozen
class Gdesc:
    """``gdesc[UR8]`` of a wgmma: the uniform register pair UR8:UR9 holds the A descriptor
    and the next pair UR10:UR11 the B descriptor (UR8:UR9 unused when A comes from
    registers); ``flags`` are what follows, ``tnspA``/``tnspB`` (an MN-major operand)."""

    reg: Reg
    flags: tuple[str, ...] = ()


Operand = Reg | Imm | Const | Mem | Label | Special | Braced | Gdesc


_REG = re.compile(r"^(UR|R|UP|P|B|SB)(Z|T|\d+)((?:\.[A-Za-z0-9_]+)*)$")
_INT = re.compile(r"^-?(0x[0-9a-fA-F]+|\d+)$")
_FLOAT = re.compile(r"^[-+]?(\d+\.?\d*(e[-+]?\d+)?|\.\d+(e[-+]?\d+)?|INF|QNAN|NAN)$", re.IGNORECASE)
_CONST = re.compile(r"^c\[(0x[0-9a-fA-F]+|\d+)\]\s*\[([^\]]*)\]((?:\.[A-Za-z0-9_]+)*)$")
_DESC = re.compile(r"^desc\[(UR\w+)\](\[.*\])$")
_GDESC = re.compile(r"^gdesc\[(UR\w+)\]((?:\.\w+)*)$")
_RELOC = re.compile(r"^32@(?:lo|hi)\((.+)\)$")
_ZERO = {"R": 255, "UR": 63}
_TRUE = {"P": 7, "UP": 7}


def split_operands(text: str) -> list[str]:
    """Split on top-level commas (not inside brackets, braces or parentheses)."""
    out: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    tail = "".join(cur).strip()
    if tail:
        out.append(tail)
    # RET.REL.NODEC R2 `(fn): a register and a label without a comma between them
    split: list[str] = []
    for piece in out:
        head, sep, label = piece.partition(" `(")
        split.extend([head.strip(), sep.strip() + label] if sep and head.strip() else [piece])
    return split


def parse_operand(text: str) -> Operand:
    t = text.strip()
    if t.startswith("`(") and t.endswith(")"):
        return Label(t[2:-1])
    if t.startswith("{"):
        return Braced(tuple(x.strip() for x in t.strip("{}").split(",")))
    if t.startswith("desc["):
        d = _DESC.match(t)
        alone = re.fullmatch(r"desc\[(UR\w+)\]", t)
        if alone:  # a TMA's L2 cache-policy register pair
            return Mem(None, None, 0, _parse_reg(alone.group(1)))
        if not d:
            raise SassSyntaxError(f"unknown memory operand '{t}'")
        desc = _parse_reg(d.group(1))
        mem = _parse_mem(d.group(2))
        return Mem(mem.reg, mem.ureg, mem.offset, desc)
    if t.startswith("gdesc["):  # wgmma matrix descriptors in uniform registers
        g = _GDESC.match(t)
        if not g:
            raise SassSyntaxError(f"unknown descriptor operand '{t}'")
        return Gdesc(_parse_reg(g.group(1)), tuple(f for f in g.group(2).split(".") if f))
    if t.startswith("["):
        return _parse_mem(t)
    neg = inv = not_ = absolute = False
    while t and t[0] in "-~!":
        if t[0] == "-" and (_INT.match(t) or _FLOAT.match(t)):
            break
        neg |= t[0] == "-"
        inv |= t[0] == "~"
        not_ |= t[0] == "!"
        t = t[1:]
    if t.startswith("|"):
        end = t.rfind("|")
        if end <= 0:
            raise SassSyntaxError(f"unbalanced '|' in '{text}'")
        tail = t[end + 1 :]
        t = t[1:end] + tail
        absolute = True
    if t.startswith("c["):
        c = _CONST.match(t)
        if not c:
            raise SassSyntaxError(f"unknown constant operand '{text}'")
        bank = int(c.group(1), 0)
        reg, off = _parse_address(c.group(2))
        sel = tuple(s for s in c.group(3).split(".") if s and s != "reuse")
        return Const(bank, off, reg, neg, inv, absolute, sel)
    if t.startswith("SR_") or t in ("SRZ", "PR", "UPR") or re.fullmatch(r"gsb\d+", t):
        # a special register, the predicate file as one value (PR/UPR: P2R, R2P), or a
        # wgmma scoreboard (gsb0)
        return Special(t)
    r = _REG.match(t)
    if r:
        reg = _parse_reg(t)
        return Reg(reg.kind, reg.index, neg, inv, not_, absolute, reg.sel)
    if _INT.match(t):
        v = int(t, 0)
        return Imm(text.strip(), v, float(v), neg=neg, abs=absolute)
    reloc = _RELOC.match(t)
    if reloc:  # in a linked cubin built with -rdc=true: an address the driver writes
        return Imm(text.strip(), 0, 0.0, reloc=reloc.group(1))
    if _FLOAT.match(t):
        return Imm(text.strip(), None, _float(t), neg=neg, abs=absolute)
    raise SassSyntaxError(f"unknown operand '{text}'")


def _float(t: str) -> float:
    u = t.upper().lstrip("+")
    sign = -1.0 if u.startswith("-") else 1.0
    u = u.lstrip("-")
    if u == "INF":
        return sign * float("inf")
    if u in ("QNAN", "NAN"):
        return float("nan") if sign > 0 else -float("nan")
    return sign * float(u)


def _parse_reg(t: str) -> Reg:
    r = _REG.match(t)
    if not r:
        raise SassSyntaxError(f"unknown register '{t}'")
    kind, num, tail = r.group(1), r.group(2), r.group(3)
    if num == "Z":
        if kind not in _ZERO:
            raise SassSyntaxError(f"unknown register '{t}'")
        index = _ZERO[kind]
    elif num == "T":
        if kind not in _TRUE:
            raise SassSyntaxError(f"unknown register '{t}'")
        index = _TRUE[kind]
    else:
        index = int(num)
    sel = tuple(s for s in tail.split(".") if s and s != "reuse")
    return Reg(kind, index, sel=sel)


def _parse_address(inner: str) -> tuple[Reg | None, int]:
    """``R3+0x10``, ``0x210``, ``RZ``, ``UR4+-0x8`` -> (register or None, offset)."""
    reg: Reg | None = None
    off = 0
    for term in _terms(inner):
        if _INT.match(term):
            off += int(term, 0)
        else:
            r = _parse_reg(term)
            if reg is not None:
                raise SassSyntaxError(f"two registers in constant address '{inner}'")
            reg = None if r.is_zero else r
    return reg, off


def _terms(inner: str) -> list[str]:
    inner = inner.replace(" ", "")
    if not inner:
        return []
    out: list[str] = []
    for piece in inner.split("+"):
        if piece:
            out.append(piece)
    return out


def _parse_mem(t: str) -> Mem:
    if not (t.startswith("[") and t.endswith("]")) or t.count("[") != 1:
        raise SassSyntaxError(f"unknown memory operand '{t}'")
    reg: Reg | None = None
    ureg: Reg | None = None
    off = 0
    for term in _terms(t[1:-1]):
        if _INT.match(term):
            off += int(term, 0)
            continue
        r = _parse_reg(term)
        if r.kind == "R" and reg is None:
            reg = r
        elif r.kind == "UR" and ureg is None:
            ureg = r
        else:
            raise SassSyntaxError(f"unknown memory operand '{t}'")
    if reg is not None and reg.is_zero and not reg.sel:
        reg = None
    if ureg is not None and ureg.is_zero:
        ureg = None
    return Mem(reg, ureg, off)
