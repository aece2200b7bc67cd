"""The rows of a block's register files, each a view made once per block: what a whole
step (:mod:`.`) reads and writes where a reader would index the file twice per operand."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np

from ..state import Block

#: a whole step's threads: every one of the block's (the index its fallback step is given)
EVERY = slice(None)
#: the most steps a chain runs before its one test (:mod:`.chains`)
CHAIN = 8
#: the broadcast addresses whose rows of lanes a block keeps (:meth:`Rows.lanes_at`)
_LANES_KEPT = 4096


class Rows:
    """Per register: its row of values (uint32, and the same bytes as float32) and of
    taint, for R and UR. Views of the block's own arrays: a write through a row is the
    block's (the arrays are never replaced)."""

    def __init__(self, b: Block) -> None:
        self.r: list[Any] = list(b.r)
        self.f: list[Any] = list(b.r.view(np.float32))
        self.t: list[Any] = list(b.tr)
        self.ur: list[Any] = list(b.ur)
        self.uf: list[Any] = list(b.ur.view(np.float32))
        self.tur: list[Any] = list(b.tur)
        self._shared: dict[int, tuple[Any, Any, Any]] = {}
        self._lanes: dict[int, Any] = {}  # lanes_at's rows
        self.wide = np.empty(b.threads)  # a step's float64 values, and their bits
        self.wide_bits = self.wide.view(np.uint64)
        self.spare = np.empty(b.threads)  # an operand widened to float64
        self.spare_taint = np.empty(b.threads, dtype=np.uint8)
        # a chain's float64 values (:mod:`.chains`), a row a step, and its first k rows as
        # one (and their bits), for k from 1
        chain = np.empty((CHAIN, b.threads))
        self.chain = list(chain)
        self.chain_first = [chain[:k].reshape(-1) for k in range(CHAIN + 1)]
        self.chain_bits = [x.view(np.uint64) for x in self.chain_first]

    def lanes_at(self, x: int) -> Any:
        """Every lane's address ``x`` as a read-only int64 row (a broadcast's), made once per
        address (up to :data:`_LANES_KEPT` of them, then afresh)."""
        lanes = self._lanes.get(x)
        if lanes is None:
            if len(self._lanes) >= _LANES_KEPT:
                self._lanes.clear()
            lanes = self._lanes[x] = np.full(len(self.wide), x, dtype=np.int64)
            lanes.flags.writeable = False
        return lanes

    def shared(self, b: Block, width: int) -> tuple[Any, Any, Any]:
        """The block's shared memory as rows of ``width`` bytes (a power of two from 4 on):
        their uint32 words, their taint bytes, and those bytes as uint32 words (one nonzero
        where any byte is), made once per width."""
        views = self._shared.get(width)
        if views is None:
            end = len(b.smem) // width * width
            words = b.smem[:end].view(np.uint32).reshape(-1, width // 4)
            taint = b.tsmem[:end].reshape(-1, width)
            views = self._shared[width] = (words, taint, taint.view(np.uint32))
        return views


#: a whole step: the block, its rows
WholeStep: TypeAlias = Callable[[Block, Rows], None]


def usable(b: Block) -> bool:
    """Whether whole steps may run now: every write lands on every thread (no wide step's
    mask) and nothing taints the step beyond its operands (no tainted decision's ambient
    taint, :mod:`..taint_flow`)."""
    return b.mask is None and b.ambient is None and b.rec.control is None
