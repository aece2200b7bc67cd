"""The work budget: how much one spec may ask of shmem, checked before the work starts.

A small file can ask for a lot: YAML aliases and merge keys repeat one long
expression in thousands of accesses, and every access may cover up to 2^31
lane-accesses. So besides the per-access limit (:data:`shmem_cli.spec.space.MAX_LANE_ACCESSES`)
three totals are bounded, each refused up front with the place where the total
is crossed and what to change:

* **accesses**: at most :data:`MAX_ACCESSES`, each costing its report whatever its size.
* **text**: the characters of all the strings of a spec, counted after aliases and
  merge keys are expanded (:data:`MAX_TEXT`). Parsed expressions take some 60
  bytes of memory per character, so this bounds the memory of compiling a spec.
* **work**: the sum over a spec's accesses of lane-accesses times the access's
  expression weight (:func:`weight`: one unit per :data:`CHARS_PER_UNIT`
  characters of index and ``when`` text, at least one), bounded by
  :data:`MAX_WORK`, the most one access may cover. A spec may thus cost at most
  what its largest allowed access costs.
* **search**: ``analyze --suggest`` evaluates every candidate layout of an array
  (33 pads x up to 6 swizzles). An access small enough for the sweep's cache of
  index values costs its work once; a larger one costs it again for every
  candidate. That total, summed over the spec's arrays, is bounded by
  :data:`MAX_SEARCH_WORK`; an array past it gets a hint saying so instead of a search.
* **sweep**: ``shmem sweep`` evaluates an access once per params value, and again for
  every pad and swizzle where it is too large for that cache: the same count, summed
  over the params values, bounded by :data:`MAX_SWEEP_WORK` and refused before the
  sweep starts (:func:`sweep_refusal`).

The bounds are per spec file: a run over many files does each file's work.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..plumbing.errors import ShmemError, shorten

if TYPE_CHECKING:
    from .records import AccessDecl, SpecFile
    from .source import Document, KeyPath


class Space(Protocol):
    """What the budget reads of an access's iteration space (:class:`.space.Space`)."""

    @property
    def access(self) -> AccessDecl: ...
    @property
    def lane_accesses(self) -> int: ...


#: Characters of all strings of one spec after alias expansion (4 MiB).
MAX_TEXT = 4 << 20
#: Accesses of one spec: each is analyzed and reported on its own, whatever its size (about
#: 1.5 ms and 60 KB of report each: 12,000 one-warp accesses took 17 s and 720 MB of JSON)
MAX_ACCESSES = 1_000
#: Work units of one spec: lane-accesses x expression weight (2^31).
MAX_WORK = 1 << 31
#: Expression characters per unit of weight.
CHARS_PER_UNIT = 64  # 2^31 lane-accesses of 63 operator-dense characters: 42 s (128: 53 s at 114)
#: Work units of a spec's --suggest searches (each array's accesses x the layouts tried,
#: summed over its arrays: 12 arrays, each searched at the bound of one, took 78 s)
MAX_SEARCH_WORK = 1 << 32
#: Work units of one ``shmem sweep`` (every params value's accesses x the layouts tried):
#: a sweep may cost what one spec may.
MAX_SWEEP_WORK = MAX_WORK


def check_text(doc: Document) -> None:
    """Refuse a spec whose strings, aliases expanded, add up to more than MAX_TEXT."""
    total = 0
    for path, text in _strings(doc.data, ()):
        total += len(text)
        if total > MAX_TEXT:
            raise ShmemError(
                f"the spec's text adds up to more than {MAX_TEXT >> 20} MiB here (counting "
                "every repetition made by aliases and merge keys); the limit bounds the "
                "memory of compiling it: repeat long expressions less, or use params",
                path=doc.path,
                pos=doc.pos(*path),
                code="too-large",
            )


def check_accesses(doc: Document) -> None:
    """Refuse a spec of more than MAX_ACCESSES accesses, at the first one past the limit."""
    accesses = doc.data.get("accesses") if isinstance(doc.data, dict) else None
    if isinstance(accesses, list) and len(accesses) > MAX_ACCESSES:
        raise ShmemError(
            f"the spec has {len(accesses):,} accesses; the limit is {MAX_ACCESSES:,} per spec "
            "(each is analyzed and reported on its own): split them over several spec files",
            path=doc.path,
            pos=doc.pos("accesses", MAX_ACCESSES),
            code="too-large",
        )


def _strings(data: Any, path: KeyPath) -> Iterable[tuple[KeyPath, str]]:
    stack: list[tuple[KeyPath, Any]] = [(path, data)]
    while stack:
        here, value = stack.pop()
        if isinstance(value, str):
            yield here, value
        elif isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                if isinstance(key, str):
                    yield here, key
                stack.append(((*here, key), item))
        elif isinstance(value, list):
            stack.extend(((*here, i), item) for i, item in reversed(list(enumerate(value))))


def weight(access: AccessDecl) -> int:
    """Work units per lane-access: one per CHARS_PER_UNIT characters of index and
    ``when`` text (what is evaluated for every lane), at least one."""
    chars = sum(len(loc.text) for loc in access.index)
    if access.when is not None:
        chars += len(access.when.text)
    return max(1, -(-chars // CHARS_PER_UNIT))


def work(space: Space) -> int:
    """The work units of one access's iteration space."""
    return space.lane_accesses * weight(space.access)


def check_work(spec: SpecFile, spaces: Sequence[Space]) -> None:
    """Refuse a spec whose accesses together need more than MAX_WORK units, located
    at the access where the total crosses the limit."""
    total = 0
    for space in spaces:
        total += work(space)
        if total > MAX_WORK:
            access = space.access
            raise ShmemError(
                f"with access {shorten(access.name)!r} the spec needs {total:.3g} units of "
                f"work (lane-accesses x expression weight, one unit per {CHARS_PER_UNIT} "
                f"characters of index and when); the limit is {MAX_WORK} (2^31) per spec: "
                "shorten loops, split the accesses over several spec files, or simplify "
                "long expressions",
                path=spec.path,
                pos=access.pos,
                code="too-large",
            )


def layouts_work(spaces: Sequence[Space], layouts: int, cache_lanes: int) -> int:
    """The work of evaluating these accesses under ``layouts`` layouts: an access of at
    most ``cache_lanes`` lane-accesses (the evaluator's cache of index values) costs its
    work once and then a unit a lane-access for each further layout (its requests costed
    under it), a larger one its whole work once per layout."""
    return sum(
        work(s) * layouts
        if s.lane_accesses > cache_lanes
        else work(s) + s.lane_accesses * (layouts - 1)
        for s in spaces
    )


def search_refusal(needed: int, candidates: int, spent: int = 0) -> str | None:
    """Why a --suggest search over ``candidates`` layouts, ``needed`` units of work
    (:func:`layouts_work`), is not run, or None if it fits in MAX_SEARCH_WORK with the
    ``spent`` units of the spec's searches before it."""
    if spent + needed <= MAX_SEARCH_WORK:
        return None
    before = f" after the {spent:.3g} of the spec's other arrays" if spent else ""
    return (
        f"not searched: trying {candidates} layouts would take {needed:.3g} units of work"
        f"{before} (the limit is {MAX_SEARCH_WORK:.3g} a spec); run shmem sweep with a few "
        "pads or swizzles"
    )


def sweep_refusal(
    per_params: Iterable[Sequence[Space]], layouts: int, cache_lanes: int
) -> str | None:
    """Why a sweep is not run: its accesses under each params value (``per_params``), each
    with ``layouts`` pads and swizzles, need more than MAX_SWEEP_WORK; None if they fit."""
    needed = 0
    for values, spaces in enumerate(per_params, 1):
        needed += layouts_work(spaces, layouts, cache_lanes)
        if needed > MAX_SWEEP_WORK:
            return (
                "the sweep needs more units of work than its limit, "
                f"{MAX_SWEEP_WORK:,} (lane-accesses x expression weight once per params "
                "value, and each lane-access again for every further pad and swizzle; an "
                "access too large to reuse its index values, its whole work again), "
                f"reached at its params value number {values}: sweep fewer params values, "
                "pads or swizzles, or shorten the spec's loops"
            )
    return None
