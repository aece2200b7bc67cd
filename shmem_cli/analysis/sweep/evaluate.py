"""``shmem sweep`` evaluation: many variants of one spec, reusing what a variant keeps.

Reuse, so that a sweep costs about as much as a few analyses:

* the spec is compiled once; a params value only re-evaluates the loop ranges
  (:meth:`~shmem_cli.spec.compile.AccessDecl.with_params`);
* an access's index values depend on the threads, the loops and the params,
  never on padding or swizzle, so they are evaluated once per params value;
  a variant only recomputes the addresses (the array layout's address function);
* a request's wavefronts do not change when all its addresses move by a
  multiple of 128 bytes (banks and word identities stay the same), so requests
  are normalized and deduplicated before they reach the engine
  (:func:`shmem_cli.analysis.totals.request_totals`); an access whose array layout a
  variant does not change is not recomputed at all.

The totals are summed by :mod:`shmem_cli.analysis.totals`, as for ``shmem analyze``; where
the cached path cannot serve (too many distinct requests, a fault to report), an
access goes through :func:`shmem_cli.analysis.totals.scan_access`, analyze's own loop.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ...plumbing.frozen import frozen

if TYPE_CHECKING:
    import numpy.typing as npt

from ...hardware.engine import AccessKind
from ...hardware.swizzle import Swizzle, written
from ...model import Totals
from ...plumbing.errors import ShmemError, shorten
from ...spec.budget import sweep_refusal
from ...spec.compile import SpecFile
from ...spec.expr import EvalFault, Value
from ...spec.layout import Layout, Variant, resolve
from ...spec.space import CHUNK_LANES, Space
from .. import spec_synthesis
from ..spec_synthesis import SynthesisBudget
from ..totals import distinct_rows, request_totals, scan_access
from .options import SYNTH, Plan
from .results import AccessTotals, Outcome, SweepResult, VariantResult, pick_best
from .same_maps import merge_same_maps

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"

CACHE_LANES = 1 << 23  # index values kept per params value (x 8 bytes per dimension)
ROOMY_SMEM = 1 << 22  # layouts up to 4 MiB are analyzed, so that a non-fitting one gets numbers


@frozen
class _Indices:
    """An access's distinct requests in index space, with how often each occurs.

    Two requests whose lanes have the same index values (and the same live lanes)
    have the same addresses under every layout, so only one of them is kept.
    """

    values: tuple[I64, ...]  # per dimension, (R, 32)
    live: B8  # (R, 32): lanes whose address counts
    count: I64  # (R,): how many requests each row stands for
    low: tuple[int, ...]  # per dimension, smallest live value
    high: tuple[int, ...]


def _params_key(params: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(params.items()))


class Evaluator:
    """Analyzes variants of one spec, reusing whatever a variant does not change."""

    def __init__(self, spec: SpecFile, *, cache_lanes: int | None = None) -> None:
        self.spec = spec
        self.cache_lanes = CACHE_LANES if cache_lanes is None else cache_lanes
        self._specs: dict[tuple[tuple[str, int], ...], SpecFile | ShmemError] = {}
        self._indices: dict[int, _Indices | None] = {}
        self._indices_params: Any = None
        self._totals: dict[tuple[Any, ...], AccessTotals] = {}
        self._plain: dict[tuple[tuple[str, int], ...], Layout] = {}  # per params value
        self._loops_use_ranges = any(lp.values is None for a in spec.accesses for lp in a.loops)

    # a spec with its params changed: its loop ranges are evaluated for the new values
    def specialized(self, params: Mapping[str, int]) -> SpecFile:
        full = {**self.spec.params, **params}
        key = _params_key(full)
        if full == dict(self.spec.params) or not self._loops_use_ranges:
            base = self.spec
        else:
            if key not in self._specs:
                self._specs[key] = self._with_params(full)
            got = self._specs[key]
            if isinstance(got, ShmemError):
                raise got
            base = got
        return replace(base, arch=replace(base.arch, smem_per_block=ROOMY_SMEM))

    def plain_layout(self, spec: SpecFile, params: Mapping[str, int]) -> Layout:
        """The layout of ``spec`` (:meth:`specialized` to ``params``) under ``params``, no pad
        or swizzle changed: resolved once per params value, for the sweep's work bound
        (:func:`run_sweep`) and for a variant that sets only params (a ShmemError each time
        it does not resolve)."""
        key = _params_key(params)
        if key not in self._plain:
            self._plain[key] = resolve(spec, Variant(params=params))
        return self._plain[key]

    def _with_params(self, params: Mapping[str, int]) -> SpecFile | ShmemError:
        """The spec with ``params``, or the error that compiling it with them gives."""
        spec = self.spec
        for name, value in params.items():
            if not -(2**62) < value < 2**62:  # as the spec compiler checks a param
                return ShmemError(
                    f"param {shorten(name)!r} is too large",
                    path=spec.path,
                    pos=spec.param_pos.get(name),
                )
        try:
            accesses = tuple(a.with_params(params) for a in spec.accesses)
        except ShmemError as exc:
            return exc.located(spec.path)
        return replace(spec, accesses=accesses)

    def evaluate(
        self, variant: Variant, only: Sequence[int] | None = None, bare: Sequence[str] | None = None
    ) -> Outcome:
        """Analyze ``variant`` (all accesses, or those numbered in ``only``).

        Its extra bytes are counted against the same layout with the arrays in ``bare``
        (default: every array) unpadded and unswizzled.
        """
        try:
            spec = self.specialized(variant.params)
            try:
                if variant.pad or variant.swizzle:
                    layout = resolve(spec, variant)
                else:
                    layout = self.plain_layout(spec, variant.params)
            except ShmemError:
                resolve(
                    replace(spec, arch=self.spec.arch), variant
                )  # the message with the real limit
                raise
            plain = list(spec.arrays) if bare is None else bare
            reference = Variant(
                params=variant.params,
                pad={**variant.pad, **dict.fromkeys(plain, 0)},
                swizzle={**variant.swizzle, **dict.fromkeys(plain)},
            )
            extra = layout.smem_bytes - resolve(spec, reference).smem_bytes
            numbers = range(len(spec.accesses)) if only is None else only
            totals = tuple(self._access(spec, layout, i) for i in numbers)
        except ShmemError as exc:
            return Outcome(error=exc.located(self.spec.path))
        return Outcome(
            accesses=totals,
            smem_bytes=layout.smem_bytes,
            extra_bytes=extra,
            fits=layout.smem_bytes <= self.spec.arch.smem_per_block,
        )

    def _access(self, spec: SpecFile, layout: Layout, i: int) -> AccessTotals:
        acc = spec.accesses[i]
        arr = layout.arrays[acc.array]
        pkey = (_params_key(layout.params), layout.block)
        key = (i, pkey, arr.strides, arr.padded_shape, arr.offset, arr.swizzle, arr.esize)
        if key not in self._totals:
            kind = Space(spec, layout, acc).kind
            idx = self._index_values(spec, layout, i, pkey)
            totals = self._fast(spec, layout, i, idx, kind) if idx is not None else None
            if totals is None:
                totals = self._slow(spec, layout, i, kind)
            self._totals[key] = AccessTotals(acc.name, totals)
        return self._totals[key]

    def _index_values(self, spec: SpecFile, layout: Layout, i: int, pkey: Any) -> _Indices | None:
        if pkey != self._indices_params:  # params are the outermost axes: keep one value's worth
            self._indices.clear()
            self._indices_params = pkey
        if i not in self._indices:
            self._indices[i] = self._compute_indices(spec, layout, i)
        return self._indices[i]

    def _compute_indices(self, spec: SpecFile, layout: Layout, i: int) -> _Indices | None:
        """Evaluate the access's index expressions chunk by chunk, keeping distinct requests.

        None when the fast path cannot be used: too many distinct requests for the
        cache, or a fault that the reference path (:class:`Space`) reports, located.
        """
        acc = spec.accesses[i]
        space = Space(spec, layout, acc)
        space.check_size()
        used = sum(
            v.live.size * (len(v.values) + 1) for v in self._indices.values() if v is not None
        )
        env = space.thread_env()
        per_chunk = max(1, CHUNK_LANES // space.threads)
        parts: list[tuple[list[I64], B8, I64]] = []
        for start in range(0, space.iterations, per_chunk):
            part = self._chunk(space, env, start, min(per_chunk, space.iterations - start))
            if part is None:
                return None
            parts.append(part)
            used += part[1].size * (len(acc.index) + 1)
            if used > self.cache_lanes:
                return None
        values = [np.concatenate([p[0][k] for p in parts]) for k in range(len(acc.index))]
        live = np.concatenate([p[1] for p in parts])
        count = np.concatenate([p[2] for p in parts])
        if len(parts) > 1:
            first, group = distinct_rows([*values, live.astype(np.int64)])
            count = np.bincount(group, weights=count, minlength=len(first)).astype(np.int64)
            values, live = [v[first] for v in values], live[first]
        if live.any():
            low = tuple(int(v[live].min()) for v in values)
            high = tuple(int(v[live].max()) for v in values)
        else:
            low = high = tuple(0 for _ in values)
        return _Indices(tuple(values), live, count, low, high)

    @staticmethod
    def _chunk(
        space: Space, base_env: Mapping[str, Value], start: int, count: int
    ) -> tuple[list[I64], B8, I64] | None:
        """Index values of ``count`` loop iterations from ``start``, on the live lanes of
        Space.batch.

        None on a fault (or a ``when`` that is not warp-uniform for ldmatrix/stmatrix):
        the reference path reports it, located.
        """
        acc, ws = space.access, space.spec.arch.warp_size
        threads = space.threads
        env = space.chunk_env(base_env, start, count)
        shape = (count, threads)
        try:
            _, lanes = space.lanes(env, start, count)
            values = [
                np.broadcast_to(np.asarray(loc.expr.evaluate(env, lanes), dtype=np.int64), shape)
                for loc in acc.index
            ]
        except (ShmemError, EvalFault):
            return None
        live = np.ones(shape, dtype=bool) if lanes is None else lanes
        pad = space.warps * ws - threads
        if pad:
            live = np.pad(live, ((0, 0), (0, pad)))
            values = [np.pad(v, ((0, 0), (0, pad))) for v in values]
        live = np.ascontiguousarray(live).reshape(-1, ws)
        rows = live.any(axis=1)
        live = live[rows]
        flat = [np.where(live, np.ascontiguousarray(v).reshape(-1, ws)[rows], 0) for v in values]
        first, group = distinct_rows([*flat, live.astype(np.int64)])
        weight = np.bincount(group, minlength=len(first)).astype(np.int64)
        return [v[first] for v in flat], live[first], weight

    @staticmethod
    def _fast(
        spec: SpecFile, layout: Layout, i: int, idx: _Indices, kind: AccessKind
    ) -> Totals | None:
        """Totals from the cached index values; None where the chunked path must report."""
        acc = spec.accesses[i]
        arr = layout.arrays[acc.array]
        for k, limit in enumerate(arr.padded_shape):
            if idx.low[k] < 0 or idx.high[k] >= limit:
                return None  # out of bounds: the reference path gives the message
        addr = arr(*idx.values)
        if kind.is_matrix and ((addr % spec.arch.ldmatrix_row_bytes != 0) & idx.live).any():
            return None
        return request_totals(addr, idx.live, kind, spec.arch, idx.count)

    @staticmethod
    def _slow(spec: SpecFile, layout: Layout, i: int, kind: AccessKind) -> Totals:
        """Chunk by chunk through :class:`Space` (which raises the located errors)."""
        return scan_access(Space(spec, layout, spec.accesses[i]), kind)


def run_sweep(spec: SpecFile, plan: Plan, evaluator: Evaluator | None = None) -> SweepResult:
    """Analyze every point of ``plan`` in order and pick the best."""
    plan.check(spec)
    ev = evaluator or Evaluator(spec)
    refusal = sweep_refusal(_params_spaces(ev, plan), plan.layouts, ev.cache_lanes)
    if refusal is not None:
        raise ShmemError(refusal, path=spec.path, code="too-large")
    results = []
    maps: dict[Any, Swizzle | None] = {}
    budget = SynthesisBudget()
    for n, point in enumerate(plan.points()):
        variant = _with_synthesized(ev, plan.variant(spec, point), maps, budget)
        if budget.exhausted:
            raise ShmemError(
                f"the sweep's synth swizzles need more than {spec_synthesis.MAX_RUN_LANES:,} lane "
                "addresses synthesized (one synthesis an array, params value and pad): sweep "
                "fewer pads or params values with synth, or give the swizzle it found",
                path=spec.path,
                code="too-large",
            )
        outcome = ev.evaluate(variant, bare=plan.swept_arrays(spec))
        shown = plan.resolved_point(point, variant)
        results.append(VariantResult(n, shown, plan.settings(spec, shown), variant, outcome))
    settings = functools.partial(plan.settings, spec)
    results = merge_same_maps(results, plan, _array_bytes(ev), settings)  # one row a map
    return SweepResult(
        path=spec.path,
        name=spec.name,
        axes=plan.axes,
        access_names=tuple(a.name for a in spec.accesses),
        variants=tuple(results),
        smem_limit=spec.arch.smem_per_block,
        best=pick_best(results),
    )


def _array_bytes(ev: Evaluator) -> Callable[[VariantResult], Mapping[str, int] | None]:
    """Each array's bytes under a row's params and pads (None where they do not resolve),
    one layout for each params value and pad: what :func:`.same_maps.merge_same_maps`
    compares a row's swizzles over."""
    known: dict[tuple[Any, ...], Mapping[str, int] | None] = {}

    def sizes(row: VariantResult) -> Mapping[str, int] | None:
        params, pad = row.variant.params, row.variant.pad
        key = (_params_key(params), tuple(sorted(pad.items())))
        if key not in known:
            try:
                layout = resolve(ev.specialized(params), Variant(params=params, pad=pad))
                known[key] = {name: a.nbytes for name, a in layout.arrays.items()}
            except ShmemError:
                known[key] = None
        return known[key]

    return sizes


def _params_spaces(ev: Evaluator, plan: Plan) -> Iterator[list[Space]]:
    """The accesses' iteration spaces under each params value of ``plan`` (none for a
    value the spec refuses: its variants only report why)."""
    for params in plan.params_points():
        try:
            spec = ev.specialized(params)
            layout = ev.plain_layout(spec, params)  # kept for the variants of these params
        except ShmemError:
            yield []
            continue
        yield [Space(spec, layout, acc) for acc in spec.accesses]


def _with_synthesized(
    ev: Evaluator, variant: Variant, maps: dict[Any, Swizzle | None], budget: SynthesisBudget
) -> Variant:
    """``variant`` with each ``synth`` swizzle replaced by the map synthesized for its
    array under the variant's params and pads (cached in ``maps``); no swizzle where
    the variant cannot be analyzed (its own evaluation says why)."""
    chosen: dict[str, Swizzle | None] = {}
    for name, swz in variant.swizzle.items():
        if swz is not SYNTH:
            continue
        key = (_params_key(variant.params), name, variant.pad.get(name))
        if key not in maps:
            try:
                spec = ev.specialized(variant.params)
                found = budget.synthesized(
                    spec, name, Variant(params=variant.params, pad=variant.pad)
                )
            except ShmemError:
                found = None
            maps[key] = (
                None
                if found is None
                else Swizzle(found.swizzle.terms, f"synth {written(found.swizzle)}")
            )
        chosen[name] = maps[key]
    return replace(variant, swizzle={**variant.swizzle, **chosen}) if chosen else variant
