"""From the emulator's per-instruction request records to the trace result.

Every request is costed by its records' ``stats`` (the engine's one door,
:func:`shmem_cli.hardware.engine.request_stats`, or the measured cp.async rule of
:mod:`shmem_cli.hardware.async_copy` when the records carry the global side), and the worst
one is explained lane by lane by :func:`shmem_cli.hardware.engine.explain_request` for its
bank table, exactly as ``shmem analyze`` does for a spec's requests: the same rules,
the same result model. The warp x occurrence heat map puts warps across and each
warp's n-th execution of the instruction down.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias

import numpy as np

from ..hardware.arch import ArchProfile
from ..hardware.engine import AccessKind, RequestStats, explain_request
from ..hardware.ops import OP_NAMES
from ..model import AccessResult, RequestRef
from .result import (
    LineTotals,
    NotModelled,
    OpTotals,
    TraceAccess,
)

if TYPE_CHECKING:
    import numpy.typing as npt

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"
INT: TypeAlias = "npt.NDArray[np.integer]"

HEAT_LIMIT = 1 << 22  # keep the per-request map up to 4M requests (as analyze does)


class InstructionLike(Protocol):
    """A parsed SASS instruction (shmem_cli.trace.sass.Instruction)."""

    @property
    def pc(self) -> int: ...
    @property
    def file(self) -> str | None: ...
    @property
    def line(self) -> int | None: ...
    @property
    def text(self) -> str: ...
    @property
    def name(self) -> str: ...


class RecordsLike(Protocol):
    """The requests of one instruction (trace.records.InstructionRecords)."""

    @property
    def instruction(self) -> InstructionLike: ...
    @property
    def kind(self) -> AccessKind: ...
    @property
    def n(self) -> int: ...
    @property
    def warp(self) -> INT: ...
    @property
    def iteration(self) -> INT: ...
    @property
    def data_dependent(self) -> B8: ...
    @property
    def not_modelled(self) -> B8: ...
    @property
    def src(self) -> I64 | None: ...  # cp.async: each lane's global source address
    def rows(self, arch: ArchProfile) -> tuple[I64, B8]: ...
    def stats(self, arch: ArchProfile) -> RequestStats: ...


def trace_access(
    rec: RecordsLike,
    arch: ArchProfile,
    *,
    warps: int,
    warps_per_block: int,
    blocks: int,
    location: tuple[str, int] | None = None,
) -> TraceAccess:
    """Totals, worst request and heat map of one instruction over all its requests;
    ``location`` (file, line) replaces the instruction's own source location."""
    ins = rec.instruction
    file, line = location if location is not None else (ins.file, ins.line)
    by_rule = rec.kind.op == "wgmma"  # costed by the measured rule, no lanes to explain
    kind = rec.kind
    addr, active = rec.rows(arch)  # ldmatrix/stmatrix: only the lanes that give row addresses
    n = len(addr)
    warp_ids = np.asarray(rec.warp[:n], dtype=np.int64)
    occurrence = np.asarray(rec.iteration[:n], dtype=np.int64)
    st = rec.stats(arch)
    wavefronts, ideal, ways = st.wavefronts, st.ideal, st.ways
    cycles = int(st.cycles.sum())
    iterations = int(occurrence.max()) + 1 if n else 0
    heat = heat_ideal = None
    if n and iterations * warps <= HEAT_LIMIT:
        heat = np.full((iterations, warps), -1, dtype=np.int32)
        heat_ideal = np.full((iterations, warps), -1, dtype=np.int32)
        heat[occurrence, warp_ids] = wavefronts
        heat_ideal[occurrence, warp_ids] = ideal
    shown = detail = None
    worst = 0
    if n:
        k = int(np.argmax(wavefronts))
        worst = int(wavefronts[k])
        warp, occ = int(warp_ids[k]), int(occurrence[k])
        where: tuple[tuple[str, int], ...] = (("occurrence", occ),)
        if blocks > 1:
            where = (("block", warp // warps_per_block), *where)
        shown = RequestRef(
            warp=warp,
            iteration=occ,
            loop_values=where,
            wavefronts=worst,
            ideal=int(ideal[k]),
            ways=int(ways[k]),
        )
        if not by_rule:
            lanes = [int(a) if on else None for a, on in zip(addr[k], active[k], strict=True)]
            detail = explain_request(lanes, kind, arch)
    result = AccessResult(
        name=ins.text,
        array=f"pc 0x{ins.pc:04x}",
        op=rec.kind.op,
        dtype=ins.name,
        width=kind.size,
        requests=n,
        wavefronts=int(wavefronts.sum()),
        ideal_wavefronts=int(ideal.sum()),
        max_ways=int(ways.max()) if n else 0,
        cycles=cycles,
        lane_accesses=int(active.sum()),
        line=line,
        column=None,
        shown=shown,
        detail=detail,
        warps=warps,
        iterations=iterations,
        loops=(),
        heat=heat,
        heat_ideal=heat_ideal,
        conflicted_requests=int((wavefronts > ideal).sum()),
        max_wavefronts_per_request=worst,
    )
    return TraceAccess(
        result=result,
        pc=ins.pc,
        sass=ins.text,
        opcode=ins.name,
        op=rec.kind.op,
        file=file,
        line=line,
        data_dependent_requests=int(np.count_nonzero(rec.data_dependent[:n])),
        inexact_requests=int(np.count_nonzero(rec.not_modelled[:n])),
        # cp.async without its global side is costed like a store of its width
        provisional=rec.kind.op == "cp_async" and rec.src is None,
        predicated_off=int(getattr(rec, "predicated_off", 0)),
        reads=getattr(rec, "reads", None),
    )


def line_totals(accesses: Sequence[TraceAccess]) -> tuple[LineTotals, ...]:
    """The accesses added up per source line, in file and line order."""
    groups: dict[tuple[str, int], list[TraceAccess]] = {}
    for a in accesses:
        groups.setdefault((a.file or "", a.line or 0), []).append(a)
    out = []
    for (file, line), group in sorted(groups.items()):
        ops: list[str] = []
        for a in group:
            if a.op not in ops:
                ops.append(a.op)
        out.append(
            LineTotals(
                file=file or None,
                line=line or None,
                ops=tuple(ops),
                instructions=len(group),
                requests=sum(a.result.requests for a in group),
                wavefronts=sum(a.result.wavefronts for a in group),
                ideal_wavefronts=sum(a.result.ideal_wavefronts for a in group),
                max_ways=max(a.result.max_ways for a in group),
                cycles=sum(a.result.cycles for a in group),
            )
        )
    return tuple(out)


def op_totals(accesses: Iterable[TraceAccess]) -> dict[str, OpTotals]:
    """Requests and wavefronts per op kind (every kind present, zero when unused)."""
    sums = {op: [0, 0, 0] for op in OP_NAMES}
    for a in accesses:
        s = sums[a.op]
        s[0] += a.result.requests
        s[1] += a.result.wavefronts
        s[2] += a.result.ideal_wavefronts
    return {op: OpTotals(*s) for op, s in sums.items()}


def not_modelled(items: Iterable[tuple[InstructionLike, int]]) -> tuple[NotModelled, ...]:
    """The instructions whose shared-memory traffic is not modelled, with their executions."""
    return tuple(
        NotModelled(pc=i.pc, sass=i.text, file=i.file, line=i.line, executions=count)
        for i, count in sorted(items, key=lambda item: item[0].pc)
    )
