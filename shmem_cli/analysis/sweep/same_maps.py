"""One row for swizzles that are one map over the array: two spellings that move every byte
of each array alike (``128B`` and ``Swizzle<3,4,3>``; ``none`` and ``Swizzle<0,4,3>``; on a
512-byte array, ``Swizzle<3,4,3>`` and ``Swizzle<2,4,3>``, whose third term reads bit 9,
which no offset of the array has) give the same addresses, so the same row twice.

The maps are compared over each array's own range of byte offsets, 0 to its size (padding
included) under the variant's params and pads, never by their spelling: an XOR map's image
of an offset is the XOR of the target masks of its set source bits, so two maps differ at
an offset exactly where a source bit whose masks differ is set, and an offset below
``nbytes`` can have bit ``s`` set exactly where ``2**s < nbytes``. Rows merge only where
their outcomes are the same too (a map's period may place the arrays after it elsewhere).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...hardware.swizzle import Swizzle, Terms, swizzle_label
from .options import Plan
from .results import Outcome, VariantResult

#: (array name, its map's terms that some offset of it reaches) for every swizzled array
_Key = tuple[tuple[str, Terms], ...]


def reached(swz: Swizzle | None, nbytes: int) -> Terms:
    """The terms of ``swz`` that move some offset below ``nbytes`` (none: the identity)."""
    return () if swz is None else tuple((s, m) for s, m in swz.terms if (1 << s) < nbytes)


def _same_outcome(a: Outcome, b: Outcome) -> bool:
    if a.error is not None or b.error is not None:
        return a.error is not None and b.error is not None and str(a.error) == str(b.error)
    said = (a.accesses, a.smem_bytes, a.extra_bytes, a.fits)
    return said == (b.accesses, b.smem_bytes, b.extra_bytes, b.fits)


def merge_same_maps(
    results: Sequence[VariantResult],
    plan: Plan,
    sizes: Callable[[VariantResult], Mapping[str, int] | None],
    settings: Callable[[tuple[Any, ...]], Any],
) -> list[VariantResult]:
    """``results`` with each row whose swizzles are an earlier row's maps over every array
    (``sizes``: each array's bytes under the row's params and pads, None where they do not
    resolve: the row stays) merged into that row, whose swizzle is shown with both
    spellings (``128B = Swizzle<3,4,3>``; ``settings`` makes its settings from the point);
    the rows numbered again in sweep order. Without a swizzle axis, ``results`` as they are."""
    swizzled = [i for i, a in enumerate(plan.axes) if a.kind == "swizzle"]
    if not swizzled or len(results) < 2:
        return list(results)
    kept: list[VariantResult] = []
    spellings: dict[int, list[tuple[Any, ...]]] = {}  # a kept row's place -> its points
    seen: dict[tuple[Any, ...], list[int]] = {}
    for r in results:
        nbytes = sizes(r)
        if nbytes is None:
            kept.append(r)
            continue
        rest = tuple(v for i, v in enumerate(r.point) if i not in swizzled)
        maps: _Key = tuple(
            (name, reached(swz, nbytes.get(name, 0)))
            for name, swz in sorted(r.variant.swizzle.items())
        )
        same = next(
            (k for k in seen.get((rest, maps), []) if _same_outcome(kept[k].outcome, r.outcome)),
            None,
        )
        if same is None:
            seen.setdefault((rest, maps), []).append(len(kept))
            spellings[len(kept)] = [r.point]
            kept.append(r)
        else:
            spellings[same].append(r.point)
    out: list[VariantResult] = []
    for n, r in enumerate(kept):
        points = spellings.get(n, [r.point])
        if len(points) > 1:
            shown = _both(r.point, points, swizzled)
            r = replace(r, point=shown, settings=settings(shown))
        out.append(replace(r, index=len(out)))
    return out


def _both(
    point: tuple[Any, ...], points: list[tuple[Any, ...]], axes: list[int]
) -> tuple[Any, ...]:
    """``point`` with each swizzle axis's value labelled with every spelling of it merged."""
    out = list(point)
    for i in axes:
        labels = list(dict.fromkeys(swizzle_label(p[i]) for p in points))
        if len(labels) > 1:
            terms = point[i].terms if point[i] is not None else ()
            out[i] = Swizzle(terms, " = ".join(labels))  # shown only, never applied
    return tuple(out)
