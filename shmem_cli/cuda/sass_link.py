"""A kernel with the device functions it calls, placed in one address space as the
driver's loader places a module's code.

A debug build (``nvcc -G``) keeps every device function a function of its own, in its own
``.text`` section: the caller writes the return address into R20:R21 with relocated
halves (``MOV R20, 32@lo((kernel + .L_x_3@srel))``: the address of the label after the
call) and jumps with ``CALL.ABS.NOINC `(callee)``; the callee returns with
``RET.ABS.NODEC R20``. :func:`link` appends each function the kernel reaches after it
(each at an address of its own, aligned as code is), names each by a label at its first
instruction, and writes the relocated immediates as the addresses they stand for, so
that the emulator's CALL, RET and branches need nothing more than one function's labels.
A function the text does not hold (one outside the cubin, ``vprintf``) stays a call the
emulator steps over.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from .sass import Function, Instruction, function_sections, parse
from .sass_operands import Imm, Label, Operand

__all__ = ["in_text", "link", "linked_function", "place_data"]

#: where each appended function starts: code is placed at 128-byte boundaries
ALIGN = 0x80
#: ``32@lo((fn + .L_x_3@srel))`` / ``32@hi(...)``: a half of a label's address in ``fn``
_LABEL_ADDRESS = re.compile(r"^32@(lo|hi)\(\(?\s*([^\s()+]+)\s*\+\s*([^\s()@]+)@srel\s*\)?\)$")
#: ``32@lo(fn)``, ``32@lo((sym + 0x10))``: a half of a symbol's address (a function
#: pointer, a data object)
_SYMBOL_ADDRESS = re.compile(
    r"^32@(lo|hi)\(\(?\s*([^\s()+@]+)\s*(?:\+\s*(0x[0-9a-fA-F]+|\d+)\s*)?\)?\)$"
)


def callees(fn: Function) -> list[str]:
    """The functions ``fn`` names (calls, or takes the address of) outside itself, in
    order of first appearance."""
    out: list[str] = []
    for ins in fn.instructions:
        for o in ins.operands:
            name = None
            if isinstance(o, Label) and o.name not in fn.labels and o.name != fn.name:
                name = o.name
            elif isinstance(o, Imm) and o.reloc is not None:
                m = _SYMBOL_ADDRESS.match(o.text) or _LABEL_ADDRESS.match(o.text)
                name = m.group(2) if m else None
            if name is not None and name != fn.name and name not in out:
                out.append(name)
    return out


def link(
    root: Function, lookup: Callable[[str], Function | None], also: Sequence[str] = ()
) -> Function:
    """``root`` followed by every function it reaches through ``lookup`` (by mangled name;
    None for one outside the text), and those ``also`` names (a virtual table's) with what
    they reach. ``root`` itself is returned where it calls none and takes no address."""
    order = [root]
    seen = {root.name}
    k = 0
    while k < len(order):
        for name in [*callees(order[k]), *(also if k == 0 else ())]:
            if name in seen:
                continue
            seen.add(name)
            found = lookup(name)
            if found is not None and found.instructions:
                order.append(found)
        k += 1
    relocated = any(isinstance(o, Imm) and o.reloc for i in root.instructions for o in i.operands)
    if len(order) == 1 and not relocated:
        return root
    base: dict[str, int] = {}
    end = 0
    for fn in order:
        base[fn.name] = end
        end = -(-(fn.instructions[-1].pc + 16 + end) // ALIGN) * ALIGN
    out = Function(root.name)
    spans: list[tuple[str, int, int]] = []  # each function's instructions in out's list
    for fn in order:
        rename = _label_names(fn, root, out.labels)
        at = base[fn.name]
        if fn is not root:
            out.labels[fn.name] = at
        for label, pc in fn.labels.items():
            out.labels[rename.get(label, label)] = pc + at
        start = len(out.instructions)
        for ins in fn.instructions:
            out.instructions.append(_placed(ins, fn, at, base, rename))
        spans.append((fn.name, start, len(out.instructions)))
    _as_inlined(out.instructions, spans[1:])
    return out


def _as_inlined(code: list[Instruction], spans: list[tuple[str, int, int]]) -> None:
    """A function called from one place only, whose address is never taken, placed as an
    optimised build inlines it: the call's source locations after each of its instructions'
    own (in place), so its lines are reported in the caller's terms (``kernel.cu:9 <
    block_scan.cuh:189``). ``spans`` come callers first, as :func:`link` found them."""
    names = {name for name, _, _ in spans}
    sites: dict[str, list[int]] = {}
    for k, ins in enumerate(code):
        for o in ins.operands:
            if isinstance(o, Label) and o.name in names and ins.opcode == "CALL":
                sites.setdefault(o.name, []).append(k)
            elif isinstance(o, Imm) and (s := _SYMBOL_ADDRESS.match(o.text)) and s[2] in names:
                sites.setdefault(s[2], []).extend((-1, -1))  # a function pointer
    for name, start, end in spans:
        called = sites.get(name, [])
        chain = code[called[0]].locations if len(called) == 1 else ()
        for k in range(start, end) if chain else ():
            ins = code[k]
            where = (*ins.locations, *chain)
            code[k] = dataclasses.replace(
                ins, locations=where, file=where[-1][0], line=where[-1][1]
            )


def in_text(text: str) -> Callable[[str], Function | None]:
    """A lookup of :func:`link`: the function of nvdisasm's ``text`` by name (only its
    section parsed; the sections found in one pass, the first time), None when the text
    lacks it."""
    sections: dict[str, str] = {}

    def lookup(name: str) -> Function | None:
        if not sections:
            sections.update(function_sections(text) or {"": ""})
        found = [f for f in parse(sections.get(name, "")) if f.name == name]
        return found[0] if found else None

    return lookup


def linked_function(text: str, name: str) -> Function | None:
    """The function ``name`` of nvdisasm's ``text`` linked with the functions it calls that
    the text holds; None when the text lacks ``name``."""
    lookup = in_text(text)
    root = lookup(name)
    return None if root is None else link(root, lookup)


def _label_names(fn: Function, root: Function, taken: dict[str, int]) -> dict[str, str]:
    """New names for the labels of ``fn`` that another function placed before it has
    (nvdisasm numbers labels across the text, so this is rare)."""
    if fn is root:
        return {}
    return {lb: f"{fn.name}{lb}" for lb in fn.labels if lb in taken}


def _placed(
    ins: Instruction, fn: Function, at: int, base: dict[str, int], rename: dict[str, str]
) -> Instruction:
    """``ins`` of ``fn`` moved to ``at``: its own labels renamed, its relocated halves
    written as the addresses they name where the linked code holds them."""
    operands: list[Operand] = []
    for o in ins.operands:
        if isinstance(o, Label) and o.name in rename:
            o = Label(rename[o.name])
        elif isinstance(o, Imm) and o.reloc is not None:
            o = _resolved(o, fn, base)
        operands.append(o)
    return dataclasses.replace(ins, pc=ins.pc + at, operands=tuple(operands))


def place_data(fn: Function, addresses: dict[str, int]) -> Function:
    """``fn`` with the relocated halves of the data symbols it takes the address of
    (``MOV R6, 32@lo(sym)``) written as ``addresses`` gives them (where the launch placed
    the module's global sections); ``fn`` itself where it takes none."""
    out: list[Instruction] = []
    for ins in fn.instructions:
        ops = tuple(
            _resolved(o, fn, addresses) if isinstance(o, Imm) and o.reloc is not None else o
            for o in ins.operands
        )
        out.append(ins if ops == ins.operands else dataclasses.replace(ins, operands=ops))
    if all(a is b for a, b in zip(out, fn.instructions, strict=True)):
        return fn
    return Function(fn.name, out, dict(fn.labels))


def _resolved(imm: Imm, fn: Function, base: dict[str, int]) -> Imm:
    """A relocated half as the value the loader writes, where the linked code holds what it
    names (a label of ``fn``, or a function's start)."""
    address = half = None
    m = _LABEL_ADDRESS.match(imm.text)
    if m and m.group(2) == fn.name in base and m.group(3) in fn.labels:
        address, half = base[fn.name] + fn.labels[m.group(3)], m.group(1)
    s = _SYMBOL_ADDRESS.match(imm.text)
    if s and s.group(2) in base:
        address, half = base[s.group(2)] + int(s.group(3) or "0", 0), s.group(1)
    if address is None:
        return imm
    value = address >> 32 if half == "hi" else address & 0xFFFFFFFF
    return Imm(imm.text, value, float(value))
