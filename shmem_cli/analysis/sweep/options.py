"""``shmem sweep`` options: the axes (``--param``, ``--pad``, ``--swizzle``) and their plan.

A sweep is the cross product of its axes, params outermost, the last axis fastest;
every point is a :class:`~shmem_cli.spec.layout.Variant`, and :class:`Settings` says what
it sets, shaped for people and JSON. Parsing raises ValueError with the accepted
forms; :meth:`Plan.check` raises ShmemError for names the spec does not have.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from math import prod
from typing import Any

from ...hardware.swizzle import Swizzle, parse_swizzle, swizzle_label
from ...plumbing.errors import ShmemError, shorten
from ...plumbing.frozen import frozen
from ...spec.compile import SpecFile
from ...spec.layout import Variant

#: Variants of one sweep: a row of the report each (about 1 ms and 10 KiB a row)
MAX_VARIANTS = 10_000
#: ``--swizzle ARRAY=synth``: the XOR map synthesized for the array in each variant
SYNTH = Swizzle((), "synth")

_INT = r"[+-]?[0-9]{1,20}"  # ASCII digits, a 64-bit value at most
_RANGE = re.compile(rf"^\s*({_INT})\s*\.\.\s*({_INT})\s*(?::\s*({_INT})\s*)?\Z")


def distinct(values: Sequence[Any]) -> tuple[Any, ...]:
    """Each value once, in the order first given: a value given twice (``--pad 1,1``,
    ``--define PAD=1,1``) is swept once, its row the same (for a kernel, one compile)."""
    return tuple(dict.fromkeys(values))


def parse_values(text: str, limit: int = MAX_VARIANTS) -> tuple[int, ...]:
    """``a..b`` (inclusive), ``a..b:step``, ``a,b,c`` or ``a`` (each distinct value once, in
    the order given: :func:`distinct`). Raises ValueError."""
    long = re.search(r"[0-9]{21,}", text)
    if long:  # a range's or a list's number past 64 bits: said as that, not as a bad form
        raise ValueError(
            f"{shorten(text)!r} holds a number of {len(long.group()):,} digits; a value here "
            "has at most 20"
        )
    m = _RANGE.match(text)
    if m:
        lo, hi = int(m.group(1)), int(m.group(2))
        step = int(m.group(3)) if m.group(3) is not None else 1
        if step <= 0:
            raise ValueError(f"the step of {shorten(text)!r} must be positive")
        if hi < lo:
            raise ValueError(
                f"{shorten(text)!r} is empty: ranges run upwards from a to b, b included"
            )
        if (hi - lo) // step + 1 > limit:
            raise ValueError(f"{shorten(text)!r} has more than {limit} values")
        return tuple(range(lo, hi + 1, step))
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not re.fullmatch(_INT, part):
            raise ValueError(
                f"{shorten(text)!r} is not a list of integers or a range (a..b, a..b:step, a,b,c)"
            )
        out.append(int(part))
    return distinct(out)


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


@frozen
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
    """``--pad [ARRAY=]RANGE``, ``--swizzle [ARRAY=]LIST``, ``--param NAME=RANGE``.

    Raises ValueError."""
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
        values: tuple[Any, ...] = distinct(
            [
                SYNTH if p.strip().lower() == "synth" else parse_swizzle(p)
                for p in split_swizzles(body)
            ]
        )
    else:
        values = parse_values(body)
        if kind == "pad" and min(values) < 0:
            raise ValueError(f"pads cannot be negative ({shorten(text)!r})")
    if not values:
        raise ValueError(f"{shorten(text)!r} gives no value")
    return Axis(kind, target, values)


@frozen
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

    def params_points(self) -> Iterator[dict[str, int]]:
        """The params values of the sweep, outermost first (one empty one without --param)."""
        axes = [a for a in self.axes if a.kind == "param"]
        for point in itertools.product(*(a.values for a in axes)):
            yield {str(a.target): v for a, v in zip(axes, point, strict=True)}

    @property
    def layouts(self) -> int:
        """Pads and swizzles tried under each params value."""
        return prod(len(a.values) for a in self.axes if a.kind != "param")

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
        """Arrays whose pad or swizzle the sweep sets (None: every array, as when only params
        vary)."""
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

    def resolved_point(self, point: Sequence[Any], variant: Variant) -> tuple[Any, ...]:
        """``point`` with a ``synth`` swizzle of one array shown as the map it became."""
        out = []
        for a, v in zip(self.axes, point, strict=True):
            if v is SYNTH and a.kind == "swizzle" and a.target is not None:
                v = variant.swizzle.get(a.target)
            elif v is SYNTH and a.kind == "swizzle":  # every array: each one's map, named
                maps = [
                    (n, m.label.removeprefix("synth ") if m is not None else "none")
                    for n, m in variant.swizzle.items()
                ]
                said = [m for _, m in maps] if len(maps) == 1 else [f"{n} {m}" for n, m in maps]
                v = Swizzle((), "synth " + ", ".join(said))  # shown only, never applied
            out.append(v)
        return tuple(out)

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


@frozen
class Settings:
    pad: int | dict[str, int] | None
    swizzle: str | dict[str, str] | None
    params: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"pad": self.pad, "swizzle": self.swizzle, "params": dict(self.params)}
