"""The convergence state of a block's threads: each thread's convergence-barrier masks,
yielded and sleeping flags, and the part of its warp it runs in (the rules that use them:
:mod:`.convergence`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....hardware.arch import SM90
from ...distinct_rows import warp_or

#: a thread's next instruction while it waits or has exited (past any function's end)
BLOCKED = np.int64(1) << 40
#: convergence barrier registers (``B0`` .. ``B15``)
BARRIERS = 16
#: :attr:`Convergence.reg` of a thread waiting at a ``WARPSYNC``
AT_WARPSYNC = -1
YIELDING = frozenset(SM90.yield_opcodes)


class Convergence:
    """The convergence state of a block's threads (each array has a column per thread)."""

    def __init__(self, threads: int, warp_size: int) -> None:
        self.ws, self.threads = warp_size, threads
        self.dt: Any = np.uint32 if warp_size <= 32 else np.uint64  # a lane mask
        # per barrier register: the lanes (a bit each) of the thread's warp it waits for
        self.masks = np.zeros((BARRIERS, threads), dtype=self.dt)
        self.yielded = np.zeros(threads, dtype=bool)
        self.at = np.full(threads, -1, dtype=np.int64)  # the BSYNC/WARPSYNC waited at
        self.reg = np.zeros(threads, dtype=np.int64)  # its barrier (AT_WARPSYNC: none)
        self.want = np.zeros(threads, dtype=self.dt)  # a WARPSYNC's lanes
        self.failed = np.zeros(threads, dtype=bool)  # an mbarrier wait failed once
        self.sleep = np.full(threads, -1, dtype=np.int64)  # asleep: where it goes on
        self.waiters = 0  # threads waiting at a BSYNC or WARPSYNC
        # the part of its warp a thread runs in: lanes a yield let go past a BSYNC run as a
        # part of their own, never in one step with the rest of the warp, until the parts
        # meet (:meth:`join`)
        self.part = np.zeros(threads, dtype=np.int64)
        self.parts = 1  # part numbers given so far (1: every warp whole)
        # per barrier register: the BSSY (a number each) whose barrier the thread holds; a
        # thread passing it leaves the barriers of that BSSY only, not another one the same
        # register holds in lanes that saved theirs (BMOV) to use the register in a call
        self.bssy = np.zeros((BARRIERS, threads), dtype=np.int64)
        self.bssys = 0  # BSSY numbers given so far
        # the BSSY numbers of the barriers each thread saved with BMOV, a stack per register
        self.held: list[list[Any]] = [[] for _ in range(BARRIERS)]
        self.depth = np.zeros((BARRIERS, threads), dtype=np.int32)  # each thread's height of it
        self.pulled: list[Any] = []  # threads taken to a BSYNC by a yield, to count

    def arrays(self) -> list[Any]:
        # not bssy (a number per BSSY: a loop's state never repeats) nor depth (the call
        # frames in local memory tell a recursion's depth already)
        return [self.masks, self.yielded, self.at, self.reg, self.want, self.failed, self.sleep]

    def start(self, reg: int, ids: Any, lanes: Any) -> None:
        """``BSSY B<reg>``: threads ``ids`` hold a new barrier waiting for ``lanes``."""
        self.masks[reg][ids] = lanes
        self.bssys += 1
        self.bssy[reg][ids] = self.bssys

    def join(self, ids: Any, where: Any) -> None:
        """Threads ``ids`` go on together from instruction ``where`` (each its own): those
        of a warp at one instruction become one part."""
        if self.parts == 1 or len(ids) == 0:
            return
        key = (ids // self.ws) * (1 << 40) + where
        warps, inv = np.unique(key, return_inverse=True)
        low = np.full(len(warps), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(low, inv, self.part[ids])
        self.part[ids] = low[inv]

    def one_part(self, sel: Any) -> Any:
        """Of the threads ``sel`` (at one instruction), those of each warp's first part."""
        if self.parts == 1 or len(sel) == 0:
            return sel
        part = self.part[sel]
        warps, inv = np.unique(sel // self.ws, return_inverse=True)
        low = np.full(len(warps), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(low, inv, part)
        keep = part == low[inv]
        return sel if keep.all() else sel[keep]

    def bits(self, ids: Any) -> Any:
        """Each thread's lane as a bit."""
        return np.left_shift(self.dt(1), (ids % self.ws).astype(self.dt))

    def warp_lanes(self, ids: Any) -> tuple[Any, Any, Any]:
        """(the warps of the threads ``ids`` (sorted), each warp's lanes among them as a
        mask, each thread's position among the warps): :func:`.warp_or` of their bits."""
        by_warp = warp_or(ids, self.ws, self.bits(ids))
        return by_warp.warps, by_warp.ors, by_warp.row

    def lanes(self, warps: Any) -> Any:
        """The thread ids of ``warps``, a row each (a lane past the block's last thread, in
        a block of no whole number of warps, as the last thread: see :meth:`real`)."""
        rows = warps[:, None] * self.ws + np.arange(self.ws)[None, :]
        return np.minimum(rows, self.threads - 1)

    def real(self, warps: Any) -> Any:
        """Per lane of :meth:`lanes`: whether the thread exists."""
        return warps[:, None] * self.ws + np.arange(self.ws)[None, :] < self.threads

    def packed(self, flags: Any) -> Any:
        """Rows of lane flags as a bit mask per row."""
        weights = np.left_shift(self.dt(1), np.arange(self.ws, dtype=self.dt))
        return np.bitwise_or.reduce(np.where(flags, weights, self.dt(0)), axis=1)

    def leave(self, reg: int, ids: Any) -> None:
        """Threads ``ids`` pass ``BSYNC B<reg>`` (or break out of it: ``BREAK``): no lane of
        their warp waits for them there any more.

        The rule (docs/hardware-model.md, 9h): a thread leaves only the barrier of the
        ``BSSY`` it holds in ``reg`` (its number in :attr:`bssy`), never a different one
        that other lanes of its warp keep in the same register (restored with ``BMOV``
        around a call that used it). So each lane of the warp whose barrier in ``reg`` has
        the leaving thread's ``BSSY`` number stops waiting for it; every other lane's mask is
        left as it is."""
        mine = self.bssy[reg][ids]
        warps, gone, inv = self.warp_lanes(ids)
        number = np.zeros(len(warps), dtype=np.int64)
        number[inv] = mine  # each warp's BSSY, where its leaving threads hold one
        if (number[inv] == mine).all():  # the usual case: every warp's threads hold one
            self._drop(reg, warps, gone, number)
            return
        # some warp's threads leave the barriers of several BSSYs: one BSSY at a time
        for one in np.unique(mine).tolist():
            warps, gone, _ = self.warp_lanes(ids[mine == one])
            self._drop(reg, warps, gone, np.full(len(warps), one, dtype=np.int64))

    def _drop(self, reg: int, warps: Any, gone: Any, number: Any) -> None:
        """The lanes ``gone`` (a mask per warp of ``warps``) leave the barrier of ``BSSY``
        ``number`` (one per warp) in register ``reg``: each lane of the warp holding that
        barrier no longer waits for them."""
        rows = self.lanes(warps)
        same = self.bssy[reg][rows] == number[:, None]
        self.masks[reg][rows] &= np.where(same, ~gone[:, None], np.iinfo(self.dt).max)

    def saved(self, reg: int, ids: Any, clear: bool) -> Any:
        """``BMOV.32[.CLEAR] Rd, B<reg>``: each thread's barrier as the lanes it waits for
        (bit ``i``: lane ``i``), emptied with ``clear``; the thread keeps its BSSY number."""
        value = self.masks[reg][ids].astype(np.uint32)
        held, depth = self.held[reg], self.depth[reg]
        for level in np.unique(depth[ids]).tolist():
            if level == len(held):
                held.append(np.zeros(self.threads, dtype=np.int64))
            at = ids[depth[ids] == level]
            held[level][at] = self.bssy[reg][at]
        depth[ids] += 1
        if clear:
            self.masks[reg][ids] = 0
        return value

    def restore(self, reg: int, ids: Any, value: Any) -> None:
        """``BMOV.32 B<reg>, Ra``: the barrier waits for the lanes of the saved value but
        those that passed it meanwhile (they no longer hold it and saved it nowhere)."""
        held, depth = self.held[reg], self.depth[reg]
        known = depth[ids] > 0  # else a value saved nowhere: a barrier of its own, whole
        level = np.maximum(depth[ids] - 1, 0)
        self.bssys += 1
        bssy = np.full(len(ids), self.bssys, dtype=np.int64)
        for one in np.unique(level[known]).tolist():
            at = known & (level == one)
            bssy[at] = held[one][ids[at]]
        depth[ids] = level
        self.bssy[reg][ids] = bssy
        # per restoring thread, its warp's lanes still in the barrier of its BSSY
        rows = self.lanes(ids // self.ws)
        own = (self.masks[reg][rows] >> (rows % self.ws).astype(self.dt)) & self.dt(1)
        kept = (self.bssy[reg][rows] == bssy[:, None]) & (own == 1)
        for k, stack in enumerate(held):
            kept |= (depth[rows] > k) & (stack[rows] == bssy[:, None])
        _, restoring, inv = self.warp_lanes(ids)
        keep = np.where(known, self.packed(kept) | restoring[inv], np.iinfo(self.dt).max)
        mask = np.broadcast_to(value, (len(ids),)).astype(self.dt)
        self.masks[reg][ids] = mask & keep
