"""Swizzle synthesis for a spec: an array's accesses handed to :mod:`.synthesis`.

The accesses are taken with the array unswizzled (its declared or swept padding and
params kept), so the map found replaces whatever swizzle the spec declares.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..spec.compile import SpecFile
from ..spec.layout import Variant, resolve
from .analyze import checked_space
from .cost import RequestBatch
from .synthesis import ArrayAccess, Synthesis, synthesize
from .totals import space_batches

SYNTHESIS_LANES = 1 << 24  # lane addresses one synthesis may hold (16M: 128 MiB of them)
#: lane addresses the syntheses of one run may sort in all (``analyze --suggest`` over a
#: spec's arrays, a sweep's ``synth`` variants): a synthesis takes about 0.6 us a lane (16M:
#: 10 s and 0.9 GB), and 12 arrays at the bound took 78 s, ``--swizzle synth --pad 0..5`` 50 s
MAX_RUN_LANES = 1 << 25


def array_accesses(
    spec: SpecFile, array: str, variant: Variant | None = None
) -> tuple[list[ArrayAccess], int, int] | None:
    """Every access of ``spec`` to ``array`` under ``variant`` with the array unswizzled
    (in-array byte offsets), the array's bytes and its first byte; None past
    :data:`SYNTHESIS_LANES`."""
    base = variant or Variant()
    layout = resolve(spec, dataclasses.replace(base, swizzle={**base.swizzle, array: None}))
    arr = layout.arrays[array]
    out, lanes = [], 0
    for acc in spec.accesses:
        if acc.array != array:
            continue
        space = checked_space(spec, layout, acc)
        lanes += space.lane_accesses
        if lanes > SYNTHESIS_LANES:
            return None
        batches = list(space_batches(space))
        if not batches:
            continue
        addr = np.concatenate([b.addr for b in batches]) - arr.offset
        active = np.concatenate([b.active for b in batches])
        zeros = np.zeros(len(addr), dtype=np.int64)
        out.append(ArrayAccess(space.kind, RequestBatch(addr, active, zeros, zeros), acc.name))
    return out, arr.nbytes, arr.offset


class SynthesisBudget:
    """The lane addresses the syntheses of one run may still sort (:data:`MAX_RUN_LANES`)."""

    def __init__(self, lanes: int | None = None) -> None:
        self.left = MAX_RUN_LANES if lanes is None else lanes  # read now: a test lowers it
        self.exhausted = False  # a synthesis was not run for want of lanes

    def synthesized(
        self, spec: SpecFile, array: str, variant: Variant | None = None
    ) -> Synthesis | None:
        """:func:`synthesized` within the lanes left (None past them: ``exhausted``)."""
        layout = resolve(spec, variant or Variant())
        lanes = sum(
            checked_space(spec, layout, acc).lane_accesses
            for acc in spec.accesses
            if acc.array == array
        )
        if lanes > self.left:
            self.exhausted = True
            return None
        self.left -= lanes
        return synthesized(spec, array, variant)


def synthesized(spec: SpecFile, array: str, variant: Variant | None = None) -> Synthesis | None:
    """The best XOR map of ``array`` for all of its accesses together (:mod:`.synthesis`),
    None when they are too many to search."""
    found = array_accesses(spec, array, variant)
    if found is None:
        return None
    accesses, size, base = found
    return synthesize(accesses, size, spec.arch, base=base)
