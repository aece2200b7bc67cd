"""From the emulator's per-instruction request records to the trace result.

Each instruction's records are one request batch with its site (the SASS instruction
and its source line) for the cost door, :func:`shmem_cli.analysis.cost.cost_requests`:
the engine's rule (or the measured cp.async rule, when the records carry the global
side), the totals, the heat map and the worst request explained lane by lane, exactly
as ``shmem analyze`` gets them for a spec's requests. The warp x occurrence heat map
puts warps across and each warp's n-th execution of the instruction down. Only a
bank-conflicted instruction's map is made (the report draws no other), once its totals say
so, and the maps of one launch take at most :data:`HEAT_BYTES` (:class:`HeatRoom`): a
sampled grid's maps span every warp of the grid, so 200 instructions of an attention kernel
over 1,536 blocks held 2.1 GB of maps that nothing drew.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ..analysis.cost import HEAT_LIMIT, cost_requests, heat_bytes, heat_maps, row_answers
from ..cuda.sass import Instruction
from ..hardware import misc, ops
from ..hardware.arch import ArchProfile
from ..hardware.engine import RequestStats
from ..hardware.ops import OP_NAMES
from ..model import Cost, Totals
from .emulator.global_memory import TAINT_GLOBAL
from .folds import Tally, merged, plus, scaled
from .requests import InstructionRecords
from .result import LineTotals, SassSite, TraceAccess
from .side_totals import GenericAtomRow, MiscRow, NotModelled

#: the most bytes the heat maps kept for one launch's instructions take (each map up to
#: ``analysis.cost.HEAT_LIMIT`` requests, 8 bytes each: its wavefronts and its phases)
HEAT_BYTES = 128 << 20


@dataclass
class HeatRoom:
    """The bytes one launch's heat maps may still take."""

    left: int = HEAT_BYTES

    def take(self, size: int) -> bool:
        """Whether a map of ``size`` bytes fits in what is left (then it is taken)."""
        if size > self.left:
            return False
        self.left -= size
        return True


def trace_access(
    rec: InstructionRecords,
    arch: ArchProfile,
    *,
    warps: int,
    warps_per_block: int,
    blocks: int,
    location: tuple[str, int] | None = None,
    cas_retries: int = 0,
    contended: bool = False,
    sources: Callable[[int], tuple[str, ...]] | None = None,
    weight: int = 1,
    room: HeatRoom | None = None,
) -> TraceAccess:
    """Totals, worst request and heat map of one instruction over all its requests;
    ``location`` (file, line) replaces the instruction's own source location; ``sources``
    names the buffers of a taint byte's bits (the emulator's state.py); ``weight``: the
    blocks each request stands for (blocks proven alike: one traced, counted for all; the
    heat map and the request shown are the traced block's). A grid traced by class counts
    each class's block's requests again for the other blocks of its class (``rec.spans``
    of those kept, ``rec.again`` of those folded away), as it counts the requests folded
    away when the records reached their bound (``rec.folded``) with those kept. The heat
    map is made as :func:`with_heat` says, its bytes taken from ``room`` (default: a
    launch's, :data:`HEAT_BYTES`)."""
    ins = rec.instruction
    file, line = location if location is not None else (ins.file, ins.line)
    inner = ins.locations[0] if ins.locations else None
    if inner is not None and inner == (file, line):
        inner = None
    caller = ins.caller if ins.caller != (file, line) else None
    ranges = [(0, rec.n), *((start, end) for start, end, _ in rec.spans)]
    answers = _answers(rec, arch)
    cost, *spans = records_costs(
        rec, arch, ranges, warps=warps, warps_per_block=warps_per_block, blocks=blocks,
        answers=answers,
    )  # fmt: skip
    dependent, inexact = rec.flags(0, rec.n)
    dependent, inexact = dependent + rec.folded.dependent, inexact + rec.folded.inexact
    again = Tally()
    again.add_tally(rec.again)
    for (start, end, times), span in zip(rec.spans, spans, strict=True):
        again.add(span, *rec.flags(start, end), times)  # a class's block, again for its class
    if rec.folded.cost is not None:  # the requests folded away as the records reached their bound
        cost = merged(rec.folded.cost, cost)
    cost = scaled(cost, weight)
    if again.cost is not None:
        cost = plus(cost, again.cost)
    cost = with_heat(cost, rec, arch, HeatRoom() if room is None else room, answers)
    return TraceAccess(
        site=SassSite(
            ins.pc, ins.text, ins.name, file, line, inner, also=ins.siblings, caller=caller
        ),
        cost=cost,
        data_dependent_requests=weight * dependent + again.dependent,
        inexact_requests=weight * inexact + again.inexact,
        # cp.async without its global side is costed like a store of its width
        provisional=(
            ops.get(rec.kind.op).copy and rec.distinct.src is None and not rec.folded_source
        ),
        predicated_off=weight * rec.predicated_off + rec.again_off,
        reads=rec.reads,
        cas_retries=weight * cas_retries,
        contended=contended or cas_retries > 0,
        data_decided=bool(rec.decided & TAINT_GLOBAL),
        data_from=sources(rec.sources | rec.decided) if sources is not None else (),
    )


def _where(warps_per_block: int, blocks: int) -> Callable[[int, int], tuple[tuple[str, int], ...]]:
    """How the request shown is labelled: its block (in a grid) and occurrence."""

    def where(warp: int, occurrence: int) -> tuple[tuple[str, int], ...]:
        if blocks > 1:
            return (("block", warp // warps_per_block), ("occurrence", occurrence))
        return (("occurrence", occurrence),)

    return where


def _answers(rec: InstructionRecords, arch: ArchProfile) -> RequestStats | None:
    """The engine's answer for each distinct request ``rec`` keeps (None: none kept, or a
    measured rule's requests): asked once for every range costed and the heat map."""
    return row_answers(rec.batch(arch, distinct=True), rec.kind, arch) if rec.n else None


def records_costs(
    rec: InstructionRecords,
    arch: ArchProfile,
    ranges: Sequence[tuple[int, int]],
    *,
    warps: int | None,
    warps_per_block: int,
    blocks: int,
    answers: RequestStats | None = None,
) -> list[Cost]:
    """The cost of requests [first, end) of those ``rec`` keeps now (none folded, no weight),
    for each range: the engine's totals and the worst request, each distinct request asked
    of the engine once for all the ranges (``answers``, where already asked); the first
    range's worst request explained lane by lane, its heat map ``warps`` warps wide or more
    (the map itself is made by :func:`with_heat`). With ``warps`` None it is what
    :meth:`.recorder.Recorder.fold` folds away (the tracer's coster): the warps its requests
    span, the report's count (:func:`trace_access`'s, known once the run has ended) the
    larger where merged."""
    if answers is None:
        answers = _answers(rec, arch)
    out = []
    for k, span in enumerate(ranges):
        batch = dataclasses.replace(rec.batch(arch, distinct=True, span=span), answers=answers)
        n = batch.requests
        # the heat map's columns are the grid's warp numbers: those of a cluster's CTAs (a
        # cluster of 2x1x2 runs blocks 0, 1, gx and gx + 1) lie past warps_per_block x
        # blocks traced
        top = int(batch.warp.max()) + 1 if n else 0
        cost = cost_requests(
            [batch],
            rec.kind,
            arch,
            warps=top if warps is None else max(warps, top),
            iterations=int(batch.iteration.max()) + 1 if n else 0,
            where=_where(warps_per_block, blocks),
            detail=k == 0,
            heat=False,
        )
        out.append(cost)
    return out


def with_heat(
    cost: Cost,
    rec: InstructionRecords,
    arch: ArchProfile,
    room: HeatRoom,
    answers: RequestStats | None = None,
) -> Cost:
    """``cost``, the instruction's whole cost, with the heat map of the requests ``rec``
    keeps (``cost.warps`` x ``cost.iterations``), made only where the report draws it (a
    bank conflict: ``render.heatmap.heatmap``), none were folded away (a fold keeps no map),
    it spans at most ``analysis.cost.HEAT_LIMIT`` requests and ``room`` still has its bytes
    (past them the report says the map was omitted). Warp numbers past int32 (a huge grid's)
    wrap: such a trace keeps no map."""
    cells = cost.warps * cost.iterations
    if cost.conflict_free or rec.folded.cost is not None or not rec.n or cells > HEAT_LIMIT:
        return cost
    batch = dataclasses.replace(rec.batch(arch, distinct=True), answers=answers)
    if int(batch.warp.min()) < 0 or not room.take(heat_bytes(cost.warps, cost.iterations)):
        return cost
    heat, phases = heat_maps(batch, rec.kind, arch, warps=cost.warps, iterations=cost.iterations)
    return dataclasses.replace(cost, heat=heat, heat_phases=phases)


def cas_loop_reads(records: Sequence[InstructionRecords], retried: Iterable[int]) -> set[int]:
    """The record indices of the loads that start the retried compare-and-swap loops
    ``retried`` (record indices): the nearest shared load before the ``ATOMS.CAST.SPIN``
    that reads its address into its compare register (``LDS R2, [R5]`` ... ``ATOMS.CAST.SPIN
    R3, [R5], R2, R3``), which runs again with every failed attempt."""
    by_index = {rec.index: rec.instruction for rec in records}
    out: set[int] = set()
    for index in retried:
        cas = by_index.get(index)
        if cas is None or cas.opcode != "ATOMS" or len(cas.operands) < 3:
            continue
        address, compare = cas.operands[1], cas.operands[2]
        loads = [
            (ins.pc, i)
            for i, ins in by_index.items()
            if ins.opcode == "LDS"
            and ins.pc < cas.pc
            and len(ins.operands) == 2
            and ins.operands[0] == compare
            and ins.operands[1] == address
        ]
        if loads:
            out.add(max(loads)[1])
    return out


def _sum(accesses: Iterable[TraceAccess]) -> Totals:
    total = Totals()
    for a in accesses:
        total += a.cost
    return total


def line_totals(accesses: Sequence[TraceAccess]) -> tuple[LineTotals, ...]:
    """The accesses added up per source line, in file and line order; a line the user's
    helper holds once per line that called it (``SassSite.caller``), those it has none for
    first."""
    groups: dict[tuple[str, int, tuple[str, int]], list[TraceAccess]] = {}
    for a in accesses:
        key = (a.site.file or "", a.site.line or 0, a.site.caller or ("", 0))
        groups.setdefault(key, []).append(a)
    out = []
    for (file, line, caller), group in sorted(groups.items()):
        ops: list[str] = []
        for a in group:
            if a.cost.op not in ops:
                ops.append(a.cost.op)
        out.append(
            LineTotals(
                file=file or None,
                line=line or None,
                ops=tuple(ops),
                instructions=len(group),
                totals=_sum(group),
                caller=caller if caller[0] else None,
            )
        )
    return tuple(out)


def op_totals(
    accesses: Iterable[TraceAccess], atoms: Iterable[GenericAtomRow] = ()
) -> dict[str, Totals]:
    """Requests and wavefronts per op kind (every kind present, zero when unused), the
    atomics' with the ``op_atom`` wavefronts of the generic atomics ``atoms``, which no
    access carries (wavefronts and ideal alike, one phase each, no request)."""
    by_op: dict[str, list[TraceAccess]] = {op: [] for op in OP_NAMES}
    for a in accesses:
        by_op[a.cost.op].append(a)
    totals = {op: _sum(group) for op, group in by_op.items()}
    extra = sum(r.wavefronts for r in atoms)
    if extra:
        totals["atomic"] += Totals(wavefronts=extra, ideal_wavefronts=extra, phases=extra)
    return totals


def generic_atom_rows(
    instructions: Iterable[Instruction], wavefronts: dict[int, int], weight: int = 1
) -> tuple[GenericAtomRow, ...]:
    """The generic atomics that shared memory did not serve, with their ``op_atom``
    wavefronts (by pc, ``weight`` times: a sampled grid's), in program order."""
    return tuple(
        GenericAtomRow(i.pc, i.text, i.file, i.line, wavefronts[i.pc] * weight)
        for i in instructions
        if wavefronts.get(i.pc)
    )


def not_modelled(
    items: Iterable[tuple[Instruction, int]],
    sectors: dict[int, int] | None = None,
    callees: dict[int, str] | None = None,
    atoms: dict[int, int] | None = None,
    taints: dict[int, int] | None = None,
    sources: Callable[[int], tuple[str, ...]] | None = None,
) -> tuple[NotModelled, ...]:
    """The instructions whose shared-memory traffic is not modelled, with their executions
    (and by pc, a remote access's distributed shared memory sectors, the function outside
    the cubin a call went to, a remote atomic's op_atom wavefronts, the taint of a remote
    access's addresses: named by ``sources`` where global data decided them)."""
    got, called, sent, taint = sectors or {}, callees or {}, atoms or {}, taints or {}
    return tuple(
        NotModelled(
            pc=i.pc, sass=i.text, file=i.file, line=i.line, executions=count,
            dsmem_sectors=got.get(i.pc), callee=called.get(i.pc),
            atom_wavefronts=sent.get(i.pc, 0),
            data_dependent=bool(taint.get(i.pc, 0) & TAINT_GLOBAL),
            data_from=sources(taint.get(i.pc, 0)) if sources is not None else (),
        )
        for i, count in sorted(items, key=lambda item: item[0].pc)
    )  # fmt: skip


def misc_rows(
    instructions: Iterable[Instruction], runs: dict[int, int], done: dict[int, int]
) -> tuple[MiscRow, ...]:
    """The instructions that cost op_misc wavefronts (by pc: their warp executions ``runs``,
    and the CTA barriers a BAR completed, ``done``), costed by the rule
    (:mod:`shmem_cli.hardware.misc`)."""
    out = []
    code = list(instructions)
    for i, rule in zip(code, misc.rules_of(code), strict=True):
        count = runs.get(i.pc, 0)
        if count and rule is not None:
            cost = count * rule.per_warp + done.get(i.pc, 0) * rule.per_completion
            out.append(MiscRow(i.pc, i.text, i.file, i.line, count, cost))
    return tuple(out)


def predicated_off_rows(accesses: Iterable[TraceAccess]) -> tuple[MiscRow, ...]:
    """The shared-memory instructions warps reached with no lane on: each such execution is
    an op_misc wavefront (:data:`shmem_cli.hardware.misc.PREDICATED_OFF`). A TMA copy's
    (a uniform-datapath instruction, no LSU request) is not counted: not measured."""
    return tuple(
        MiscRow(
            a.pc, a.sass, a.file, a.line, a.predicated_off, a.predicated_off * misc.PREDICATED_OFF
        )
        for a in accesses
        if a.predicated_off and a.cost.op != "tma"
    )
