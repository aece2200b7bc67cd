"""A spec against its compiled kernel, line by line.

Each access with a ``line:`` is compared with the shared-memory instructions the
trace found at that source line: same op (a ``cp.async`` counts as a store), the
same bytes per lane, and the same requests and wavefronts (the spec's numbers
times the blocks traced). Several accesses may share a line (``acc += As[ty][k] *
Bs[k][tx]``): the instructions of one op and width at a line are matched to the
subset of the line's accesses of that op and width whose totals they equal.

What comes out: a :class:`Verdict` per access (matched, wrong with the compiled
numbers and the fix in words, or its line has no such instruction) and the
instruction groups no access describes. The rules compiled-mismatch (SH007) and
compiled-coverage (SH008) turn them into findings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from ..hardware import ops
from ..plumbing.errors import file_line
from ..plumbing.frozen import frozen

if TYPE_CHECKING:
    from ..model import AccessResult
    from ..spec.compile import AccessDecl, SpecFile
    from ..trace.result import KernelTrace, TraceAccess

OK = "ok"
WRONG = "wrong"  # the line has instructions of the op, and the numbers differ
NO_INSTRUCTION = "no-instruction"  # the line has no shared-memory instruction of the op


@frozen
class Group:
    """The instructions of one op and width at one source line, totalled."""

    file: str
    line: int
    op: str
    width: int
    opcodes: tuple[str, ...]  # distinct, in address order
    instructions: int
    requests: int
    wavefronts: int

    @property
    def where(self) -> str:
        return file_line(self.file, self.line)

    def describe(self) -> str:
        ops = "/".join(self.opcodes)
        count = f" x{self.instructions}" if self.instructions > 1 else ""
        return (
            f"{ops}{count}: {self.width} B per lane, {self.requests} requests, "
            f"{self.wavefronts} wavefronts"
        )


@frozen
class Verdict:
    """One access against the compiled code at its line."""

    status: str
    where: str  # gemm.cu:17
    groups: tuple[Group, ...] = ()  # the compiled instructions it was compared with
    fix: str = ""
    requests: int = 0  # the spec's, times the blocks traced
    wavefronts: int = 0


@frozen
class Comparison:
    """Every access's verdict (None: it has no line) and the undescribed instructions."""

    verdicts: tuple[Verdict | None, ...]
    undescribed: tuple[Group, ...]
    blocks: int
    kernel: str
    lines_described: frozenset[tuple[str, int]] = field(default=frozenset())


@frozen
class Instruction:
    """One traced shared-memory instruction, as compared: where, what, its totals."""

    file: str
    line: int
    op: str  # as a spec op (cp.async counts as a store)
    width: int
    opcode: str
    requests: int
    wavefronts: int


def instructions(accesses: Sequence[TraceAccess]) -> list[Instruction]:
    """The traced instructions that made requests and have a source line, in address order."""
    return [
        Instruction(
            a.site.file or "?",
            a.site.line,
            ops.get(a.cost.op).spec_op,
            a.cost.width,
            a.site.opcode,
            a.cost.requests,
            a.cost.wavefronts,
        )
        for a in accesses
        if a.site.line is not None and a.cost.requests > 0
    ]


def group_instructions(items: Sequence[Instruction]) -> list[Group]:
    """``items`` totalled per (file, line, op, width), in first-seen order."""
    order: dict[tuple[str, int, str, int], list[Instruction]] = {}
    for ins in items:
        order.setdefault((ins.file, ins.line, ins.op, ins.width), []).append(ins)
    return [
        Group(
            file=file,
            line=line,
            op=op,
            width=width,
            opcodes=tuple(dict.fromkeys(i.opcode for i in members)),
            instructions=len(members),
            requests=sum(i.requests for i in members),
            wavefronts=sum(i.wavefronts for i in members),
        )
        for (file, line, op, width), members in order.items()
    ]


def main_file(trace: KernelTrace, source: str) -> str | None:
    """The line-table file a bare ``line: N`` refers to.

    For a ``.cu`` source: the file of that name. For a cubin (or when the name is not
    in the line table): the file holding most of the kernel's shared-memory instructions.
    """
    files = [a.site.file for a in trace.accesses if a.site.file]
    name = PurePosixPath(source).name
    if not source.endswith(".cubin"):
        for f in files:
            if PurePosixPath(f).name == name:
                return f
    if not files:
        return None
    return max(dict.fromkeys(files), key=files.count)


def same_file(traced: str, written: str) -> bool:
    """Whether a line-table path names the file written in a spec (``FILE:LINE``)."""
    t, w = PurePosixPath(traced).parts, PurePosixPath(written).parts
    w = tuple(p for p in w if p not in (".", ""))
    return len(w) <= len(t) and t[len(t) - len(w) :] == w


def compare(
    spec: SpecFile,
    results: Sequence[AccessResult],
    trace: KernelTrace,
    suspects: Mapping[int, int] | None = None,
) -> Comparison:
    """Every access of ``spec`` with a ``line:`` against the traced kernel.

    ``suspects``: how likely nvcc changed an access (access index -> rank: 2 likely
    vectorized, 1 hoistable); when several accesses on one line could stand for the
    same instructions, the least suspect are matched first.
    """
    rank = suspects or {}
    assert spec.kernel is not None
    blocks = max(1, trace.launch.blocks_traced)
    instrs = instructions(trace.accesses)
    main = main_file(trace, spec.kernel.source)
    files = {ins.file for ins in instrs}

    def resolve(decl: AccessDecl) -> tuple[str, int] | None:
        if decl.line is None:
            return None
        if decl.line.file is None:
            return (main or "?", decl.line.line)
        for f in sorted(files):
            if same_file(f, decl.line.file):
                return (f, decl.line.line)
        return (decl.line.file, decl.line.line)

    places = [resolve(d) for d in spec.accesses]
    verdicts: list[Verdict | None] = [None] * len(spec.accesses)
    used: set[int] = set()  # indices into instrs, matched or explained
    by_line: dict[tuple[str, int, str], list[int]] = {}
    for i, (decl, place) in enumerate(zip(spec.accesses, places, strict=True)):
        if place is not None:
            by_line.setdefault((*place, decl.op), []).append(i)
    for (file, line, op), members in by_line.items():
        pool = [k for k, s in enumerate(instrs) if (s.file, s.line, s.op) == (file, line, op)]
        where = file_line(file, line)
        if not pool:
            others = group_instructions([s for s in instrs if (s.file, s.line) == (file, line)])
            for i in members:
                r = results[i]
                verdicts[i] = Verdict(
                    NO_INSTRUCTION,
                    where,
                    tuple(others),
                    _fix_missing(r, others),
                    r.cost.requests * blocks,
                    r.cost.wavefronts * blocks,
                )
            continue
        free = [k for k in pool if k not in used]
        wrong = []
        for i in sorted(members, key=lambda m: (rank.get(m, 0), m)):
            r = results[i]
            same = [k for k in free if instrs[k].width == r.cost.width]
            pick = _pick(same, instrs, r.cost.requests * blocks, r.cost.wavefronts * blocks)
            if pick is None:
                wrong.append(i)
                continue
            used.update(pick)
            free = [k for k in free if k not in pick]
            verdicts[i] = Verdict(
                OK,
                where,
                tuple(group_instructions([instrs[k] for k in pick])),
                requests=r.cost.requests * blocks,
                wavefronts=r.cost.wavefronts * blocks,
            )
        for i in sorted(wrong):
            r = results[i]
            left = group_instructions([instrs[k] for k in free])
            compared, fix = _diagnose(spec.accesses[i], r, left, blocks)
            taken = [k for k in free if any(_in_group(instrs[k], g) for g in compared)]
            used.update(taken)
            free = [k for k in free if k not in taken]
            if not compared:
                compared = tuple(group_instructions([instrs[k] for k in pool]))
            verdicts[i] = Verdict(
                WRONG, where, compared, fix, r.cost.requests * blocks, r.cost.wavefronts * blocks
            )
    described = frozenset(p for p in places if p is not None)
    return Comparison(
        verdicts=tuple(verdicts),
        undescribed=tuple(group_instructions([s for k, s in enumerate(instrs) if k not in used])),
        blocks=blocks,
        kernel=trace.name,
        lines_described=described,
    )


def _in_group(ins: Instruction, g: Group) -> bool:
    return (ins.file, ins.line, ins.op, ins.width) == (g.file, g.line, g.op, g.width)


#: the most combinations :func:`_pick` tries before giving up on an access
MAX_TRIES = 1 << 18


def _pick(
    cands: list[int], instrs: Sequence[Instruction], req: int, wav: int
) -> tuple[int, ...] | None:
    """Instructions among ``cands`` whose requests and wavefronts total ``req``/``wav``.

    Unrolled copies of one access usually cost the same each, so the candidates are
    grouped by (requests, wavefronts) and only the number taken of each kind is searched.
    """
    kinds: dict[tuple[int, int], list[int]] = {}
    for k in cands:
        kinds.setdefault((instrs[k].requests, instrs[k].wavefronts), []).append(k)
    keys = sorted(kinds, reverse=True)
    tries = [0]

    def search(j: int, r: int, w: int) -> list[int] | None:
        if r == 0 and w == 0:
            return []
        if j == len(keys) or r < 0 or w < 0 or tries[0] > MAX_TRIES:
            return None
        (kr, kw), avail = keys[j], len(kinds[keys[j]])
        most = min(avail, r // kr if kr else avail)
        for n in range(most, -1, -1):
            tries[0] += 1
            rest = search(j + 1, r - n * kr, w - n * kw)
            if rest is not None:
                return [*kinds[keys[j]][:n], *rest]
        return None

    found = search(0, req, wav)
    return None if found is None else tuple(sorted(found))


_VECTOR_NAMES = {
    ("float32", 8): "float2",
    ("float32", 16): "float4",
    ("int32", 8): "int2",
    ("int32", 16): "int4",
    ("uint32", 8): "uint2",
    ("uint32", 16): "uint4",
    ("float64", 16): "double2",
}


def vector_view(dtype: str, width: int) -> str:
    """The CUDA vector type of ``width`` bytes made of ``dtype`` elements, in words."""
    name = _VECTOR_NAMES.get((dtype, width))
    return name if name else f"{width}-byte"


def _verb(op: str) -> str:
    return ops.get(op).verb


def _diagnose(
    decl: AccessDecl, r: AccessResult, free: list[Group], blocks: int
) -> tuple[tuple[Group, ...], str]:
    """The compiled groups that stand for this access, and what to change in the spec."""
    spec_req, spec_bytes = r.cost.requests * blocks, r.cost.requests * blocks * r.cost.width
    wider = [g for g in free if g.width > r.cost.width and g.requests * g.width == spec_bytes]
    if wider:
        g = wider[0]
        factor = g.width // r.cost.width
        return (g,), (
            f"the compiled kernel {_verb(r.cost.op)} {g.width} bytes per lane here "
            f"({'/'.join(g.opcodes)}): nvcc vectorized {factor} consecutive elements into one "
            f"instruction. Declare a {vector_view(r.site.dtype, g.width)} view of {decl.array} "
            f"(same offset) and index it so that each lane moves {g.width} bytes, with "
            f"{factor}x fewer iterations"
        )
    narrower = [g for g in free if g.width < r.cost.width and g.requests * g.width == spec_bytes]
    if narrower:
        g = narrower[0]
        return (g,), (
            f"the compiled kernel {_verb(r.cost.op)} only {g.width} bytes per lane here "
            f"({'/'.join(g.opcodes)}), {g.requests} requests: nvcc split the access (the "
            f"address is not provably {r.cost.width}-byte aligned). Declare {decl.array} with "
            f"{g.width}-byte elements"
        )
    same = [g for g in free if g.width == r.cost.width]
    if same:
        g = same[0]
        if g.requests == spec_req:
            return (g,), (
                f"the compiled kernel makes the same {g.requests} requests but they take "
                f"{g.wavefronts} wavefronts, not {r.cost.wavefronts * blocks}: its addresses "
                f"differ from the spec's index or layout (check the index, pad, swizzle and offset)"
            )
        if g.requests < spec_req:
            ratio = f" ({spec_req // g.requests}x fewer)" if spec_req % g.requests == 0 else ""
            return (g,), (
                f"the compiled kernel makes {g.requests} requests here, not {spec_req}{ratio}: "
                f"nvcc hoisted the access out of a loop, or unrolled the loop and reuses "
                f"what it loaded; make the spec's loop ranges match the compiled trip counts"
            )
        return (g,), (
            f"the compiled kernel makes {g.requests} requests here, not {spec_req}: the loop "
            f"runs more often than the spec says (its trip count or its unrolled copies "
            f"differ); make the spec's loop ranges match"
        )
    if free:
        g = free[0]
        return (g,), (
            f"the compiled kernel {_verb(r.cost.op)} {g.width} bytes per lane here "
            f"({'/'.join(g.opcodes)}), {g.requests} requests, not {r.cost.width} bytes in "
            f"{spec_req} requests: make the element type and loop ranges match the compiled code"
        )
    return (), (
        "the instructions at this line are all matched by other accesses; this one has no "
        "compiled counterpart: nvcc removed it (the value stays in a register) or the line "
        "is wrong"
    )


def _fix_missing(r: AccessResult, others: list[Group]) -> str:
    if others:
        found = "; ".join(f"{g.op} {g.describe()}" for g in others)
        return (
            f"the compiled kernel has no shared-memory {r.cost.op} at this line, only {found}: "
            f"correct the op or the line"
        )
    return (
        f"the compiled kernel has no shared-memory instruction at this line: nvcc removed the "
        f"{r.cost.op} (its value stays in a register, or it was merged with another line) or the "
        f"line is wrong; remove the access or correct line:"
    )
