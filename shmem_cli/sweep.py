"""Layout sweeps: one spec under many paddings, swizzles and params, ranked.

A sweep is the cross product of its *axes* (``--param``, ``--pad``, ``--swizzle``;
params outermost, the last axis fastest). Every point is a
:class:`~shmem_cli.layout.Variant`; :class:`Evaluator` analyzes it and
:func:`run_sweep` ranks the results: fewest wavefronts, then fewest extra
shared-memory bytes, then sweep order. A variant that does not fit shared
memory is still analyzed (and shown) but never best; one that is invalid (an
index out of bounds with the new pad, a swizzle whose alignment is not met)
carries the reason instead of stopping the sweep.

Reuse, so that a sweep costs about as much as a few analyses:

* the spec is compiled once; a params value only re-evaluates the loop ranges
  (:meth:`~shmem_cli.spec.AccessDecl.with_params`);
* an access's index values depend on the threads, the loops and the params,
  never on padding or swizzle, so they are evaluated once per params value;
  a variant only recomputes flat index -> byte offset -> swizzle -> address;
* a request's wavefronts do not change when all its addresses move by a
  multiple of 128 bytes (banks and word identities stay the same), so requests
  are normalized and deduplicated before they reach the engine; an access whose
  array layout a variant does not change is not recomputed at all.

The answers are the ones :func:`shmem_cli.analysis.analyze_spec` gives for the
same variant (tests/test_sweep.py checks this on every example spec).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from math import prod
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

from .analysis import access_kind
from .engine import AccessKind, request_stats
from .errors import ShmemError, SourcePos, shorten
from .expr import EvalFault, Value
from .layout import Layout, Variant, resolve
from .model import CostTotals, FileResult, Report
from .space import CHUNK_LANES, Space
from .spec import SpecFile
from .swizzle import TMA_SWIZZLES, Swizzle, parse_swizzle, swizzle_label

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"

MAX_VARIANTS = 100_000
CACHE_LANES = 1 << 23  # index values kept per params value (x 8 bytes per dimension)
ROOMY_SMEM = (
    1 << 22
)  # layouts up to 4 MiB are analyzed, so that a non-fitting one still gets numbers
SUGGEST_PADS = range(0, 33)
SUGGEST_SWIZZLES: tuple[Swizzle | None, ...] = (None, *TMA_SWIZZLES.values())

# --- sweep options -------------------------------------------------------------------

_INT = r"[+-]?\d+"
_RANGE = re.compile(rf"^\s*({_INT})\s*\.\.\s*({_INT})\s*(?::\s*({_INT})\s*)?$")


def parse_values(text: str, limit: int = MAX_VARIANTS) -> tuple[int, ...]:
    """``a..b`` (inclusive), ``a..b:step``, ``a,b,c`` or ``a``. Raises ValueError."""
    m = _RANGE.match(text)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        step = int(m.group(3)) if m.group(3) is not None else 1
        if step <= 0:
            raise ValueError(f"the step of {text!r} must be positive")
        if hi < lo:
            raise ValueError(f"{text!r} is empty: ranges run upwards from a to b, b included")
        if (hi - lo) // step + 1 > limit:
            raise ValueError(f"{text!r} has more than {limit} values")
        return tuple(range(lo, hi + 1, step))
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not re.fullmatch(_INT, part):
            raise ValueError(
                f"{shorten(text)!r} is not a list of integers or a range (a..b, a..b:step, a,b,c)"
            )
        out.append(int(part))
    return tuple(out)


def split_swizzles(text: str) -> list[str]:
    """Split ``none,128B,Swizzle<3,4,4>`` on the commas outside ``<...>``."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "<") - (ch == ">")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


@dataclass(frozen=True)
class Axis:
    """One swept setting: a param, the pad or the swizzle of one array (``target``) or of all."""

    kind: str  # "param" | "pad" | "swizzle"
    target: str | None
    values: tuple[Any, ...]  # ints, or Swizzle | None

    @property
    def label(self) -> str:
        if self.kind == "param":
            return str(self.target)
        return self.kind if self.target is None else f"{self.kind} {self.target}"

    def show(self, value: Any) -> str:
        return swizzle_label(value) if self.kind == "swizzle" else str(value)

    def describe(self) -> str:
        shown = [self.show(v) for v in self.values]
        ints = [v for v in self.values if isinstance(v, int)]
        if self.kind != "swizzle" and len(ints) > 3:
            steps = {b - a for a, b in itertools.pairwise(ints)}
            if len(steps) == 1:
                step = steps.pop()
                text = f"{ints[0]}..{ints[-1]}" + (f":{step}" if step != 1 else "")
                shown = [text]
        where = "" if self.kind == "param" or self.target else " (every array)"
        return f"{self.label} {','.join(shown)}{where}"


def parse_axis(kind: str, text: str) -> Axis:
    """``--pad [ARRAY=]RANGE``, ``--swizzle [ARRAY=]LIST``, ``--param NAME=RANGE``. Raises ValueError."""
    target: str | None = None
    body = text
    head, eq, rest = text.partition("=")
    if eq:
        target, body = head.strip(), rest
        if not target.isidentifier():
            raise ValueError(f"{shorten(head)!r} is not a name")
    elif kind == "param":
        raise ValueError(f"--param expects NAME=RANGE, got {shorten(text)!r}")
    if kind == "swizzle":
        values: tuple[Any, ...] = tuple(parse_swizzle(p) for p in split_swizzles(body))
    else:
        values = parse_values(body)
        if kind == "pad" and min(values) < 0:
            raise ValueError(f"pads cannot be negative ({shorten(text)!r})")
    if not values:
        raise ValueError(f"{shorten(text)!r} gives no value")
    return Axis(kind, target, values)


@dataclass(frozen=True)
class Plan:
    """The axes of a sweep; :meth:`points` walks their cross product, last axis fastest."""

    axes: tuple[Axis, ...]

    @staticmethod
    def of(axes: Sequence[Axis]) -> Plan:
        order = {"param": 0, "pad": 1, "swizzle": 2}
        return Plan(tuple(sorted(axes, key=lambda a: order[a.kind])))

    @property
    def size(self) -> int:
        return prod(len(a.values) for a in self.axes)

    def points(self) -> Iterator[tuple[Any, ...]]:
        return itertools.product(*(a.values for a in self.axes))

    def check(self, spec: SpecFile) -> None:
        """Unknown names and oversized sweeps, as ShmemError (usage errors)."""
        import difflib

        for a in self.axes:
            known = list(spec.params) if a.kind == "param" else list(spec.arrays)
            if a.target is not None and a.target not in known:
                what = "param" if a.kind == "param" else "array"
                close = difflib.get_close_matches(a.target, known, n=1)
                more = (
                    f" (did you mean {close[0]!r}?)"
                    if close
                    else f"; the spec has: {', '.join(known) or 'none'}"
                )
                raise ShmemError(f"--{a.kind} {a.target}=...: no {what} {a.target!r}{more}")
        if self.size > MAX_VARIANTS:
            raise ShmemError(f"the sweep has {self.size:,} variants; the limit is {MAX_VARIANTS:,}")

    def swept_arrays(self, spec: SpecFile) -> list[str] | None:
        """Arrays whose pad or swizzle the sweep sets (None: every array, as when only params vary)."""
        axes = [a for a in self.axes if a.kind != "param"]
        if not axes or any(a.target is None for a in axes):
            return None
        return list(dict.fromkeys(str(a.target) for a in axes))

    def variant(self, spec: SpecFile, point: Sequence[Any]) -> Variant:
        params: dict[str, int] = {}
        pad: dict[str, int] = {}
        swz: dict[str, Swizzle | None] = {}
        for a, v in zip(self.axes, point, strict=True):
            if a.kind == "param":
                params[str(a.target)] = v
                continue
            names = [a.target] if a.target else list(spec.arrays)
            for n in names:
                if a.kind == "pad":
                    pad[n] = v
                else:
                    swz[n] = v
        return Variant(params=params, pad=pad, swizzle=swz)

    def settings(self, spec: SpecFile, point: Sequence[Any]) -> Settings:
        """What a variant sets, shaped for people and JSON: a global axis as one value."""

        def collect(kind: str, show: Any) -> Any:
            axes = [(a, v) for a, v in zip(self.axes, point, strict=True) if a.kind == kind]
            if not axes:
                return None
            if len(axes) == 1 and axes[0][0].target is None:
                return show(axes[0][1])
            out: dict[str, Any] = {}
            for a, v in axes:
                for n in [a.target] if a.target else list(spec.arrays):
                    out[str(n)] = show(v)
            return out

        params = {
            str(a.target): v for a, v in zip(self.axes, point, strict=True) if a.kind == "param"
        }
        return Settings(
            pad=collect("pad", int), swizzle=collect("swizzle", swizzle_label), params=params
        )


# --- results -------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    pad: int | dict[str, int] | None
    swizzle: str | dict[str, str] | None
    params: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"pad": self.pad, "swizzle": self.swizzle, "params": dict(self.params)}


@dataclass(frozen=True)
class AccessTotals(CostTotals):
    """One access under one variant: totals over all its warps and loop iterations."""

    name: str
    requests: int
    wavefronts: int
    ideal_wavefronts: int
    max_ways: int
    cycles: int
    conflicted_requests: int

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "requests": self.requests,
            "wavefronts": self.wavefronts,
            "ideal_wavefronts": self.ideal_wavefronts,
            "excess_wavefronts": self.excess_wavefronts,
            "max_ways": self.max_ways,
            "conflict_free": self.conflict_free,
            "conflicted_requests": self.conflicted_requests,
            "cycles": self.cycles,
        }


@dataclass(frozen=True)
class Outcome:
    """What one variant gives: totals per access, or the reason it is invalid."""

    accesses: tuple[AccessTotals, ...] = ()
    smem_bytes: int | None = None
    extra_bytes: int | None = None
    fits: bool = False
    error: ShmemError | None = None

    @property
    def valid(self) -> bool:
        return self.error is None

    @property
    def wavefronts(self) -> int:
        return sum(a.wavefronts for a in self.accesses)

    @property
    def ideal_wavefronts(self) -> int:
        return sum(a.ideal_wavefronts for a in self.accesses)

    @property
    def excess_wavefronts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts

    @property
    def max_ways(self) -> int:
        return max((a.max_ways for a in self.accesses), default=0)

    @property
    def cycles(self) -> int:
        return sum(a.cycles for a in self.accesses)


@dataclass(frozen=True)
class VariantResult:
    index: int
    point: tuple[Any, ...]  # one value per axis of the plan
    settings: Settings
    variant: Variant
    outcome: Outcome

    @property
    def rankable(self) -> bool:
        return self.outcome.valid and self.outcome.fits

    def rank_key(self) -> tuple[int, int, int]:
        o = self.outcome
        return (o.wavefronts, o.extra_bytes or 0, self.index)

    def to_json(self) -> dict[str, Any]:
        o = self.outcome
        out: dict[str, Any] = {"index": self.index, **self.settings.to_json()}
        if o.valid:
            out.update(
                wavefronts=o.wavefronts,
                ideal_wavefronts=o.ideal_wavefronts,
                excess_wavefronts=o.excess_wavefronts,
                max_ways=o.max_ways,
                cycles=o.cycles,
            )
        else:
            out.update(
                wavefronts=None,
                ideal_wavefronts=None,
                excess_wavefronts=None,
                max_ways=None,
                cycles=None,
            )
        out.update(smem_bytes=o.smem_bytes, extra_bytes=o.extra_bytes, fits=o.fits)
        out["error"] = (
            None
            if o.error is None
            else {"message": o.error.message, "line": o.error.line, "column": o.error.column}
        )
        out["accesses"] = [a.to_json() for a in o.accesses]
        return out


@dataclass(frozen=True)
class SweepResult:
    path: str
    name: str
    axes: tuple[Axis, ...]
    access_names: tuple[str, ...]
    variants: tuple[VariantResult, ...]
    smem_limit: int
    best: VariantResult | None = field(default=None)

    def to_json(self) -> dict[str, Any]:
        best = None
        if self.best is not None:
            o = self.best.outcome
            best = {
                "index": self.best.index,
                **self.best.settings.to_json(),
                "wavefronts": o.wavefronts,
                "extra_bytes": o.extra_bytes,
            }
        return {
            "schema_version": 1,
            "file": self.path,
            "name": self.name,
            "sweep": [a.describe() for a in self.axes],
            "smem_limit_bytes": self.smem_limit,
            "variants": [v.to_json() for v in self.variants],
            "best": best,
        }


def pick_best(variants: Sequence[VariantResult]) -> VariantResult | None:
    """Fewest wavefronts, then fewest extra bytes, then sweep order; valid and fitting only."""
    ok = [v for v in variants if v.rankable]
    return min(ok, key=VariantResult.rank_key) if ok else None


# --- evaluation with reuse -----------------------------------------------------------


@dataclass(frozen=True)
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


_HASH = np.random.default_rng(20240601).integers(1, 1 << 62, size=(9, 32), dtype=np.int64) | 1


def distinct_rows(columns: Sequence[I64]) -> tuple[I64, I64]:
    """Rows equal in every column, grouped: (index of each group's first row, group of every row).

    Rows are hashed, then checked against their group's first row, so the grouping is exact;
    with a hash collision (or too many columns) every row is its own group.
    """
    rows = len(columns[0])
    if len(columns) > len(_HASH) or columns[0].shape[1] != _HASH.shape[1] or rows < 2:
        return np.arange(rows), np.arange(rows)
    key = columns[0] @ _HASH[0]
    for c, h in zip(columns[1:], _HASH[1:], strict=False):
        key = key + c @ h
    _, first, group = np.unique(key, return_index=True, return_inverse=True)
    group = group.reshape(-1)
    for c in columns:
        if not np.array_equal(c[first][group], c):
            return np.arange(rows), np.arange(rows)
    return first, group


def request_totals(
    addr: I64, live: B8, kind: AccessKind, spec: SpecFile, count: I64 | None = None
) -> tuple[int, ...]:
    """(requests, wavefronts, ideal, max ways, cycles, conflicted) of rows of 32 lanes.

    Row r stands for ``count[r]`` requests (1 without ``count``); rows without a live
    lane are no request. Rows equal up to a shift of every address by a multiple of
    banks x bank bytes get the same engine answer, so each is computed once.
    """
    arch = spec.arch
    has = live.any(axis=1)
    if count is None:
        count = np.ones(len(addr), dtype=np.int64)
    if not has.all():
        addr, live, count = addr[has], live[has], count[has]
    if not len(addr):
        return (0, 0, 0, 0, 0, 0)
    span = arch.banks * arch.bank_bytes
    if live.all():
        low = addr.min(axis=1)
        norm = addr - (low - low % span)[:, None]
    else:
        low = np.where(live, addr, np.iinfo(np.int64).max).min(axis=1)
        norm = np.where(live, addr - (low - low % span)[:, None], -1)
    first, group = distinct_rows([norm])
    reps = norm[first]
    st = request_stats(np.maximum(reps, 0), reps >= 0, kind, arch)
    weight = np.bincount(group, weights=count, minlength=len(reps)).astype(np.int64)
    return (
        int(count.sum()),
        int((st.wavefronts * weight).sum()),
        int((st.ideal * weight).sum()),
        int(st.ways.max()),
        int((st.cycles * weight).sum()),
        int(weight[st.wavefronts > st.ideal].sum()),
    )


def _params_key(params: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(params.items()))


def _param_pos(spec: SpecFile, name: str) -> SourcePos | None:
    """Where the spec gives param ``name`` its value (the source is parsed again: errors only)."""
    from .source import load_yaml

    try:
        return load_yaml("\n".join(spec.lines) + "\n", spec.path).pos("params", name)
    except ShmemError:
        return None


class Evaluator:
    """Analyzes variants of one spec, reusing whatever a variant does not change."""

    def __init__(self, spec: SpecFile, *, cache_lanes: int = CACHE_LANES) -> None:
        self.spec = spec
        self.cache_lanes = cache_lanes
        self._specs: dict[tuple[tuple[str, int], ...], SpecFile | ShmemError] = {}
        self._indices: dict[int, _Indices | None] = {}
        self._indices_params: Any = None
        self._totals: dict[tuple[Any, ...], AccessTotals] = {}
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

    def _with_params(self, params: Mapping[str, int]) -> SpecFile | ShmemError:
        """The spec with ``params``, or the error that compiling it with them gives."""
        spec = self.spec
        for name, value in params.items():
            if not -(2**62) < value < 2**62:  # as the spec compiler checks a param
                return ShmemError(
                    f"param {shorten(name)!r} is too large",
                    path=spec.path,
                    pos=_param_pos(spec, name),
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
                layout = resolve(spec, variant)
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
            kind = access_kind(spec, layout, acc)
            idx = self._index_values(spec, layout, i, pkey)
            numbers = self._fast(spec, layout, i, idx, kind) if idx is not None else None
            if numbers is None:
                numbers = self._slow(spec, layout, i, kind)
            self._totals[key] = AccessTotals(acc.name, *numbers)
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
        """Index values of ``count`` loop iterations from ``start``, on the live lanes of Space.batch.

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
    ) -> tuple[int, ...] | None:
        acc = spec.accesses[i]
        arr = layout.arrays[acc.array]
        for k, limit in enumerate(arr.padded_shape):
            if idx.low[k] < 0 or idx.high[k] >= limit:
                return None  # out of bounds: the reference path gives the message
        addr = arr(*idx.values)
        if kind.is_matrix and ((addr % spec.arch.ldmatrix_row_bytes != 0) & idx.live).any():
            return None
        return request_totals(addr, idx.live, kind, spec, idx.count)

    @staticmethod
    def _slow(spec: SpecFile, layout: Layout, i: int, kind: AccessKind) -> tuple[int, ...]:
        """Chunk by chunk through :class:`Space` (which raises the located errors)."""
        acc = spec.accesses[i]
        totals = [0, 0, 0, 0, 0, 0]
        for batch in Space(spec, layout, acc).batches():
            part = request_totals(batch.addr, batch.active, kind, spec)
            for k in (0, 1, 2, 4, 5):
                totals[k] += part[k]
            totals[3] = max(totals[3], part[3])
        return tuple(totals)


def run_sweep(spec: SpecFile, plan: Plan, evaluator: Evaluator | None = None) -> SweepResult:
    """Analyze every point of ``plan`` in order and pick the best."""
    plan.check(spec)
    ev = evaluator or Evaluator(spec)
    results = []
    for n, point in enumerate(plan.points()):
        variant = plan.variant(spec, point)
        outcome = ev.evaluate(variant, bare=plan.swept_arrays(spec))
        results.append(VariantResult(n, tuple(point), plan.settings(spec, point), variant, outcome))
    return SweepResult(
        path=spec.path,
        name=spec.name,
        axes=plan.axes,
        access_names=tuple(a.name for a in spec.accesses),
        variants=tuple(results),
        smem_limit=spec.arch.smem_per_block,
        best=pick_best(results),
    )


# --- analyze --suggest ----------------------------------------------------------------


def _describe_change(layout: Layout, array: str, variant: Variant) -> str:
    arr = layout.arrays[array]
    parts = []
    new_pad = variant.pad.get(array, arr.pad)
    new_swz = variant.swizzle.get(array, arr.swizzle)
    if new_pad != arr.pad:
        dims = "".join(f"[{d}]" for d in (*arr.shape[:-1], arr.shape[-1] + new_pad))
        parts.append(f"pad {array} {arr.pad} -> {new_pad} ({array}{dims})")
    if new_swz != arr.swizzle:
        parts.append(f"swizzle {array} {swizzle_label(arr.swizzle)} -> {swizzle_label(new_swz)}")
    return " and ".join(parts)


def pitch_swizzle(layout: Layout, array: str) -> Swizzle | None:
    """CuTe Swizzle<3,4,S> whose source bits are the row bits of a 2^(S+4)-byte row (S > 3).

    The TMA modes XOR bits 7.. (128-byte rows); with longer power-of-two rows the
    shift must grow with the pitch so that the XOR-ed bits are row bits.
    """
    arr = layout.arrays[array]
    if len(arr.shape) < 2:
        return None
    pitch = arr.shape[-1] * arr.esize
    if pitch < 256 or pitch & (pitch - 1) or arr.esize > 16:
        return None
    shift = pitch.bit_length() - 1 - 4
    if shift > 16:
        return None
    return Swizzle(3, 4, shift, f"Swizzle<3,4,{shift}>")


def suggest(spec: SpecFile, result: FileResult) -> dict[str, str]:
    """A one-line fix per conflicting access: the cheapest pad 0..32 / swizzle of its array.

    The swizzles tried are none, the TMA modes and, for power-of-two rows of 256
    bytes or more, the CuTe Swizzle<3,4,S> matched to the row pitch. Candidates
    change only that array; they are ranked by the wavefronts of all accesses to
    the array (a fix must not just move the conflict), then shared-memory bytes.
    """
    if result.error is not None:
        return {}
    hints: dict[str, str] = {}
    by_name = {a.name: a for a in result.accesses}
    conflicted = [
        a for a in spec.accesses if a.name in by_name and not by_name[a.name].conflict_free
    ]
    ev = Evaluator(spec)
    try:
        layout = resolve(spec)
    except ShmemError:
        return {}
    for array in dict.fromkeys(a.array for a in conflicted):
        numbers = [k for k, a in enumerate(spec.accesses) if a.array == array]
        current = ev.evaluate(Variant(), only=numbers)
        if not current.valid:
            continue
        declared = layout.arrays[array].swizzle
        swizzles = list(dict.fromkeys((declared, *SUGGEST_SWIZZLES, pitch_swizzle(layout, array))))
        tried = [
            Variant(pad={array: p}, swizzle={array: s}) for p in SUGGEST_PADS for s in swizzles
        ]
        best: tuple[tuple[int, int, int], Variant, Outcome] | None = None
        for n, v in enumerate(tried):
            out = ev.evaluate(v, only=numbers)
            if not (out.valid and out.fits):
                continue
            key = (out.wavefronts, out.smem_bytes or 0, n)
            if best is None or key < best[0]:
                best = (key, v, out)
        for k in numbers:
            acc = spec.accesses[k]
            if acc not in conflicted:
                continue
            here = numbers.index(k)
            now = current.accesses[here]
            if best is None or best[2].wavefronts >= current.wavefronts:
                hints[acc.name] = (
                    f"no pad 0..32 or swizzle (none, 32B, 64B, 128B) of {array} lowers its wavefronts "
                    f"({current.wavefronts:,} over its accesses)"
                )
                continue
            _, v, out = best
            after = out.accesses[here]
            delta = (out.smem_bytes or 0) - (current.smem_bytes or 0)
            cost = (
                f"+{delta:,} B shared"
                if delta > 0
                else ("no extra bytes" if delta == 0 else f"saves {-delta:,} B")
            )
            state = "conflict-free" if after.conflict_free else f"still {after.max_ways}-way"
            text = (
                f"cheapest fix: {_describe_change(layout, array, v)} ({cost}): this access "
                f"{now.wavefronts:,} -> {after.wavefronts:,} wavefronts, {state}"
            )
            if len(numbers) > 1:
                text += f"; all {array} accesses {current.wavefronts:,} -> {out.wavefronts:,}"
            hints[acc.name] = text
    return hints


def suggest_report(report: Report) -> dict[str, dict[str, str]]:
    """:func:`suggest` for every valid file of a report with a conflict: path -> access -> hint."""
    from .spec import load_spec

    out: dict[str, dict[str, str]] = {}
    for f in report.files:
        if f.error is not None or all(a.conflict_free for a in f.accesses):
            continue
        try:
            hints = suggest(load_spec(f.path), f)
        except ShmemError:
            continue
        if hints:
            out[f.path] = hints
    return out
