"""Costs added up: the sums a trace keeps of requests it no longer holds.

A trace's records have a bound (:mod:`.emulator.budget`); records that reach it are costed,
summed per instruction and dropped (:meth:`.recorder.Recorder.fold`). A grid traced by class
counts a class's block's requests again for the other blocks of its class, ``times`` over.
Both keep a :class:`Tally` per instruction. The arithmetic of costs lives here too: what
:mod:`.aggregate` does with the requests still held is what the tallies do with those gone,
so a folded trace's totals are the unfolded one's, exactly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..model import Cost, Totals


def merged(first: Cost, then: Cost) -> Cost:
    """The cost of ``first``'s requests and, after them, ``then``'s: the sums added, the
    worst request the first one with the most wavefronts (``first``'s on a tie), the heat
    map dropped (a fold keeps none)."""
    worst = then if then.max_wavefronts_per_request > first.max_wavefronts_per_request else first
    return _with(
        worst,
        first.totals + then.totals,
        lane_accesses=first.lane_accesses + then.lane_accesses,
        warps=max(first.warps, then.warps),
        iterations=max(first.iterations, then.iterations),
        heat=None,
        heat_phases=None,
    )


def scaled(cost: Cost, weight: int) -> Cost:
    """``cost`` counted ``weight`` times (the sums; the worst request and heat map kept)."""
    if weight == 1:
        return cost
    return _with(cost, cost.totals.times(weight), lane_accesses=cost.lane_accesses * weight)


def plus(cost: Cost, more: Cost) -> Cost:
    """``cost`` with the sums of ``more`` added (:meth:`Totals.__add__`; its worst request
    and heat map kept)."""
    summed = cost.totals + more.totals
    return _with(cost, summed, lane_accesses=cost.lane_accesses + more.lane_accesses)


def _with(cost: Cost, totals: Totals, **changes: Any) -> Cost:
    """``cost`` with the figures ``totals`` and the other fields ``changes``."""
    figures = {f.name: getattr(totals, f.name) for f in dataclasses.fields(totals)}
    return dataclasses.replace(cost, **figures, **changes)


@dataclass
class Tally:
    """Requests costed: their cost (None: none yet), how many depended on data and how many
    were not modelled."""

    cost: Cost | None = None
    dependent: int = 0
    inexact: int = 0

    def add(self, cost: Cost, dependent: int, inexact: int, times: int = 1) -> None:
        """Requests costing ``cost``, counted ``times`` times (after those tallied)."""
        if times <= 0:
            return
        more = scaled(cost, times)
        self.cost = more if self.cost is None else merged(self.cost, more)
        self.dependent += times * dependent
        self.inexact += times * inexact

    def add_tally(self, other: Tally, times: int = 1) -> None:
        """``other``'s requests, counted ``times`` times."""
        if other.cost is not None:
            self.add(other.cost, other.dependent, other.inexact, times)
