"""``shmem sweep`` results: per variant the totals of each access, ranked.

The totals of an access are :class:`~shmem_cli.model.Totals` with its name; their
JSON is the model's (:meth:`~shmem_cli.model.Totals.json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...model import COST_KEYS, CostView, Totals
from ...plumbing.errors import ShmemError
from ...spec.layout import Variant
from .options import Axis, Settings


@dataclass(frozen=True)
class AccessTotals(CostView):
    """One access under one variant: totals over all its warps and loop iterations."""

    name: str
    totals: Totals

    def _totals(self) -> Totals:
        return self.totals

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **self.totals.json(*COST_KEYS, "cycles")}


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
