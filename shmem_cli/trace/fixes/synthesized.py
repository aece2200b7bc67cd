"""The synthesized swizzle of a traced array: its instructions handed to the synthesis
(:mod:`shmem_cli.analysis.synthesis`), and the TMA copies that fix what it may be.

An array that TMA fills is laid out by the copy engine: its layout can only be one of
the tensor map's swizzle modes, and it cannot be padded (the box lands densely). Its
traced addresses already carry the mode the map has; the modes tried are applied to
the offsets with that mode undone (each mode is its own inverse).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ...analysis.synthesis import ArrayAccess, Synthesis, synthesize
from ...hardware.arch import ArchProfile
from ...hardware.swizzle import TMA_SWIZZLES, Swizzle
from ..requests import InstructionRecords, TmaFill
from .arrays import SharedArray
from .relayout import Change

# ops whose lanes' addresses move with the array (wgmma reads through descriptors)
MOVABLE = ("load", "store", "atomic", "ldmatrix", "stmatrix", "cp_async")
NONE = Swizzle((), "none")


def tma_mode(array: SharedArray, fills: Sequence[TmaFill]) -> int | None:
    """The swizzle bytes (0, 32, 64, 128) of the TMA copies that write into ``array``;
    None when none does. Copies with different modes: the widest."""
    modes = {f.swizzle for f in fills if f.start < array.end and f.end > array.offset}
    return max(modes) if modes else None


def mode_swizzle(width: int) -> Swizzle:
    """The XOR map of a TMA swizzle mode of ``width`` bytes (0: none)."""
    return TMA_SWIZZLES[f"{width}B"] if width else NONE


def tma_changes(current: int) -> list[Change]:
    """Every other TMA mode, as a change of the traced layout (the current mode undone)."""
    now = mode_swizzle(current)
    out = []
    for width in (0, 32, 64, 128):
        if width == current:
            continue
        mode = mode_swizzle(width)
        change = now.then(mode)
        out.append(Change("swizzle", swizzle=Swizzle(change.terms, mode.label)))
    return out


def synthesize_array(
    recs: Sequence[InstructionRecords],
    array: SharedArray,
    arch: ArchProfile,
    tma: int | None = None,
) -> Synthesis | None:
    """The best XOR map of ``array`` for all its traced instructions together, the array
    placed on a bank line as a swizzle places it (``tma``: the mode its TMA copies have,
    the answer then one of the modes); None when an instruction's traffic cannot move
    with the array (wgmma's descriptors fix its layout)."""
    line = arch.banks * arch.bank_bytes
    undo = mode_swizzle(tma or 0)
    accesses = []
    for rec in recs:
        if rec.kind.op not in MOVABLE:
            return None
        batch = rec.batch(arch)
        if not len(batch.addr):
            continue
        rel = undo.apply(np.where(batch.active, batch.addr - array.offset, 0))
        accesses.append(
            ArrayAccess(rec.kind, dataclasses.replace(batch, addr=rel), rec.instruction.text)
        )
    if not accesses:
        return None
    start = -(-array.offset // line) * line
    return synthesize(accesses, array.size, arch, base=start, fill="free" if tma is None else "tma")
