"""``shmem sweep`` results: per variant the totals of each access, ranked.

The totals of an access are :class:`~shmem_cli.model.Totals` with its name; their
JSON is the model's (:meth:`~shmem_cli.model.Totals.json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field
from typing import Any

from ...model import COST_KEYS, Totals
from ...plumbing.errors import ShmemError
from ...plumbing.frozen import frozen
from ...spec.layout import Variant
from .options import Axis, Settings
from .report import RankedVariant, sweep_json


@frozen
class AccessTotals:
    """One access under one variant: totals over all its warps and loop iterations."""

    name: str
    totals: Totals

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, **self.totals.json(*COST_KEYS, "cycles")}


@frozen
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
    def totals(self) -> Totals:
        """Every access's totals added up."""
        total = Totals()
        for a in self.accesses:
            total += a.totals
        return total


@frozen
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
        return (o.totals.wavefronts, o.extra_bytes or 0, self.index)

    def ranked(self) -> RankedVariant:
        o = self.outcome
        return RankedVariant(
            index=self.index,
            settings=self.settings.to_json(),
            totals=o.totals if o.valid else None,
            smem_bytes=o.smem_bytes,
            extra_bytes=o.extra_bytes,
            fits=o.fits,
            error=o.error,
            details={"accesses": [a.to_json() for a in o.accesses]},
        )


@frozen
class SweepResult:
    path: str
    name: str
    axes: tuple[Axis, ...]
    access_names: tuple[str, ...]
    variants: tuple[VariantResult, ...]
    smem_limit: int
    best: VariantResult | None = field(default=None)

    def to_json(self) -> dict[str, Any]:
        return sweep_json(
            file=self.path,
            name=self.name,
            sweep=[a.describe() for a in self.axes],
            smem_limit=self.smem_limit,
            variants=[v.ranked() for v in self.variants],
            best=None if self.best is None else self.best.ranked(),
        )


def pick_best(variants: Sequence[VariantResult]) -> VariantResult | None:
    """Fewest wavefronts, then fewest extra bytes, then sweep order; valid and fitting only."""
    ok = [v for v in variants if v.rankable]
    return min(ok, key=VariantResult.rank_key) if ok else None
