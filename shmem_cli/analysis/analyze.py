"""The pipeline: spec -> layout -> iteration space -> engine -> result model.

Pure apart from reading spec files; no printing. ``analyze_spec`` is what the
CLI, ``sweep`` and ``lint`` share.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..hardware.engine import AccessKind, RequestStats, explain_request, request_stats
from ..model import AccessResult, FileResult, Report, RequestRef
from ..plumbing.errors import ShmemError
from ..spec.budget import check_work
from ..spec.compile import AccessDecl, SpecFile, load_spec, spec_from_mapping
from ..spec.layout import Layout, Variant, resolve
from ..spec.source import shown_name
from ..spec.space import Batch, Space
from .totals import I64, scan_access

HEAT_LIMIT = 1 << 22  # keep the per-request wavefront map up to 4M requests


@dataclass(frozen=True)
class RequestChoice:
    """A request picked by the user: a warp and a flat loop-iteration index."""

    warp: int
    iteration: int = 0


def access_kind(spec: SpecFile, layout: Layout, access: AccessDecl) -> AccessKind:
    """What one lane of ``access`` does (:attr:`Space.kind`)."""
    return Space(spec, layout, access).kind


def checked_space(spec: SpecFile, layout: Layout, access: AccessDecl) -> Space:
    """The access's iteration space for this layout's params, refused if it is too large."""
    try:
        access = access.with_params(layout.params)
    except ShmemError as exc:
        raise exc.located(spec.path) from None
    space = Space(spec, layout, access)
    space.check_size()
    return space


def analyze_access(
    spec: SpecFile,
    layout: Layout,
    access: AccessDecl,
    *,
    choice: RequestChoice | None = None,
    detail: bool = True,
) -> AccessResult:
    """Totals for one access over its whole iteration space."""
    space = checked_space(spec, layout, access)
    access = space.access
    kind = space.kind
    arch = spec.arch
    warps, iterations = space.warps, space.iterations
    keep_heat = warps * iterations <= HEAT_LIMIT
    heat = np.full((iterations, warps), -1, dtype=np.int32) if keep_heat else None
    heat_ideal = np.full((iterations, warps), -1, dtype=np.int32) if keep_heat else None
    worst: tuple[int, int, int] | None = None  # wavefronts, iteration, warp

    def visit(batch: Batch, rows: I64, stats: RequestStats) -> None:
        nonlocal worst
        if heat is not None and heat_ideal is not None:
            cells = batch.first_iteration * warps + rows
            heat.reshape(-1)[cells] = stats.wavefronts
            heat_ideal.reshape(-1)[cells] = stats.ideal
        k = int(np.argmax(stats.wavefronts))
        if worst is None or int(stats.wavefronts[k]) > worst[0]:
            row = int(rows[k])
            worst = (int(stats.wavefronts[k]), batch.first_iteration + row // warps, row % warps)

    totals = scan_access(space, kind, visit)
    shown: RequestRef | None = None
    req_detail = None
    pick = None
    if choice is not None:
        if not 0 <= choice.warp < warps or not 0 <= choice.iteration < iterations:
            raise ShmemError(
                f"--request {choice.warp}:{choice.iteration} is outside this access's "
                f"{warps} warp(s) x {iterations} iteration(s)"
            )
        pick = (choice.iteration, choice.warp)
    elif worst is not None:
        pick = (worst[1], worst[2])
    if pick is not None:
        it, warp = pick
        one = space.batch(space.thread_env(), it, 1)
        addr = one.addr[warp : warp + 1]
        act = one.active[warp : warp + 1]
        if act.any():
            st = request_stats(addr, act, kind, arch)
            shown = RequestRef(
                warp=warp,
                iteration=it,
                loop_values=space.loop_values(it),
                wavefronts=int(st.wavefronts[0]),
                ideal=int(st.ideal[0]),
                ways=int(st.ways[0]),
            )
            if detail:
                lanes = [int(a) if on else None for a, on in zip(addr[0], act[0], strict=True)]
                req_detail = explain_request(lanes, kind, arch)
    return AccessResult(
        name=access.name,
        array=access.array,
        op=access.op,
        dtype=layout.arrays[access.array].decl.dtype.name,
        width=kind.size,
        requests=totals.requests,
        wavefronts=totals.wavefronts,
        ideal_wavefronts=totals.ideal_wavefronts,
        max_ways=totals.max_ways,
        cycles=totals.cycles,
        conflicted_requests=totals.conflicted_requests,
        lane_accesses=space.lane_accesses,
        line=access.pos.line if access.pos else None,
        column=access.pos.column if access.pos else None,
        shown=shown,
        detail=req_detail,
        warps=warps,
        iterations=iterations,
        loops=tuple(lp.describe() for lp in access.loops),
        heat=heat,
        heat_ideal=heat_ideal,
        max_wavefronts_per_request=worst[0] if worst is not None else 0,
    )


def analyze_spec(
    spec: SpecFile,
    variant: Variant | None = None,
    *,
    choice: RequestChoice | None = None,
    detail: bool = True,
) -> FileResult:
    layout = resolve(spec, variant)
    # refuse a too-large access, or too much work in all, before any work on the others
    check_work(spec, [checked_space(spec, layout, acc) for acc in spec.accesses])
    results = tuple(
        analyze_access(spec, layout, acc, choice=choice, detail=detail) for acc in spec.accesses
    )
    return FileResult(
        path=spec.path,
        name=spec.name,
        accesses=results,
        block=layout.block,
        smem_bytes=layout.smem_bytes,
        spec=spec,
    )


def analyze_path(path: str | Path, *, choice: RequestChoice | None = None) -> FileResult:
    """Analyze one file; a bad spec becomes a FileResult carrying its error."""
    try:
        spec = load_spec(path)
        return analyze_spec(spec, choice=choice)
    except ShmemError as exc:
        shown = shown_name(path)  # "<stdin>" for "-"
        exc.located(shown)
        return FileResult(path=shown, name=Path(shown).stem, error=exc)


def collect_specs(paths: Iterable[str | Path]) -> list[Path]:
    """Expand directories into their ``*.yaml``/``*.yml`` files, sorted; keep files as given."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(
                sorted(q for q in p.rglob("*") if q.suffix in (".yaml", ".yml") and q.is_file())
            )
        else:
            out.append(p)
    return out


def analyze(
    source: str | Path | Mapping[str, Any], *, choice: RequestChoice | None = None
) -> FileResult:
    """Analyze one spec, given as a path or as a mapping in the spec format.

    Returns the :class:`~shmem_cli.model.FileResult` the JSON output is rendered
    from. Raises :class:`~shmem_cli.plumbing.errors.ShmemError` when the spec is invalid::

        from shmem_cli import analyze
        result = analyze("access_specs/column_read_32x33.yaml")
        assert result.accesses[0].conflict_free
    """
    spec = spec_from_mapping(source) if isinstance(source, Mapping) else load_spec(source)
    return analyze_spec(spec, choice=choice)


def analyze_many(paths: Iterable[str | Path], *, choice: RequestChoice | None = None) -> Report:
    return Report(files=tuple(analyze_path(p, choice=choice) for p in collect_specs(paths)))
