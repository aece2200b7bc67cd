"""Chains: plain float whole steps (:mod:`.floats`) that follow one another in the code, run
as one, their test made once for them all. Each writes its value and taint as its own step
would, the test (:func:`..ops.floating.plain`) over every step's float64 values at the end;
where it fails the destinations' rows are put back as they were and each step runs alone
(its own test, its own step where that fails): the same values either way. A chain holds
up to :data:`.rows.CHAIN` steps; the scheduler runs one where the straight run holds it
whole (:func:`..scheduler._run_straight`). A block whose registers' bytes carry taint of
their own (``byte_clean``) runs the steps alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....cuda.sass import Instruction
from ..ops.floating import plain
from ..state import Block
from .floats import Member, member
from .rows import CHAIN, Rows, WholeStep

#: a chain: how many instructions it runs, and its step
Chain = tuple[int, Callable[[Block, Rows], None]]


def chains_of(instructions: list[Instruction], whole: list[Any]) -> list[Chain | None]:
    """Per instruction, the chain that starts at it (None: none, or a chain of one): the
    plain float steps from it on, up to :data:`.rows.CHAIN` of them."""
    n = len(instructions)
    pairs = zip(instructions, whole, strict=True)
    members = [member(i) if w is not None else None for i, w in pairs]
    out: list[Chain | None] = [None] * n
    for k in range(n):
        end = k
        while end < n and end - k < CHAIN and members[end] is not None:
            end += 1
        if end - k > 1:
            ms = [m for m in members[k:end] if m is not None]
            out[k] = (end - k, _chain(ms, whole[k:end]))
    return out


def _chain(ms: list[Member], singles: list[WholeStep]) -> Callable[[Block, Rows], None]:
    k = len(ms)
    saved = np.array(sorted({m.d for m in ms}), dtype=np.intp)  # the rows a failure puts back
    steps = [(m.sum, m.taint, m.d) for m in ms]

    def run(blk: Block, rows: Rows) -> None:
        if blk.byte_clean:
            for w in singles:
                w(blk, rows)
            return
        values, taints = blk.r.take(saved, axis=0), blk.tr.take(saved, axis=0)
        f, chain = rows.f, rows.chain
        for j, (values_of, taint, d) in enumerate(steps):
            r = chain[j]
            values_of(rows, r)
            f[d][...] = r  # (the cast astype makes)
            taint(rows)
        if plain(rows.chain_first[k], rows.chain_bits[k]):
            return
        blk.r[saved], blk.tr[saved] = values, taints
        for w in singles:
            w(blk, rows)

    return run
