"""The distinct requests of one SASS instruction, each kept once.

A grid's blocks, and a loop's iterations, repeat the same warp-level requests: the same
lane addresses with the same active lanes (and for cp.async the same global sources).
:class:`DistinctRows` keeps each distinct row once and gives every request the number of
its row, so that a 16,384-block launch keeps, and the engine costs, only the requests
that differ. Rows are found again by a 64-bit hash of their contents and always compared
in full: two rows share a number only when they are equal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"

# odd multipliers of each lane's fields in the hash (fixed: the hash is the same every run)
_MIX = np.random.default_rng(0x5EED_B0A7).integers(1, 1 << 62, size=(4, 128), dtype=np.uint64)
_MIX |= np.uint64(1)


def _hash(addr: I64, active: B8, src: I64 | None, nbytes: I64 | None) -> Any:
    lanes = addr.shape[1]
    h = (addr.astype(np.uint64) * _MIX[0, :lanes]).sum(axis=1, dtype=np.uint64)
    h += (active.astype(np.uint64) * _MIX[1, :lanes]).sum(axis=1, dtype=np.uint64)
    if src is not None and nbytes is not None:
        h += (src.astype(np.uint64) * _MIX[2, :lanes]).sum(axis=1, dtype=np.uint64)
        h += (nbytes.astype(np.uint64) * _MIX[3, :lanes]).sum(axis=1, dtype=np.uint64)
    return h


def _resize(a: Any, rows: int) -> Any:
    out = np.zeros((rows, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out


class DistinctRows:
    """Distinct (lanes)-wide rows: addresses, active lanes, for cp.async the global side."""

    def __init__(self, lanes: int) -> None:
        self.lanes = lanes
        self.n = 0
        self.addr: I64 = np.zeros((0, lanes), dtype=np.int64)
        self.active: B8 = np.zeros((0, lanes), dtype=bool)
        self.src: I64 | None = None  # cp.async: each lane's global source address
        self.nbytes: I64 | None = None  # and how many source bytes it reads
        self._by_hash: dict[int, int] = {}

    @property
    def nbytes_held(self) -> int:
        arrays = (self.addr, self.active, self.src, self.nbytes)
        return sum(a.nbytes for a in arrays if a is not None) + 100 * len(self._by_hash)

    def _append(self, addr: I64, active: B8, src: I64 | None, nbytes: I64 | None) -> Any:
        k = len(addr)
        need = self.n + k
        if need > len(self.addr):
            cap = max(need, 2 * len(self.addr), 16)
            self.addr = _resize(self.addr, cap)
            self.active = _resize(self.active, cap)
            if self.src is not None and self.nbytes is not None:
                self.src = _resize(self.src, cap)
                self.nbytes = _resize(self.nbytes, cap)
        s = slice(self.n, need)
        self.addr[s] = addr
        self.active[s] = active
        if src is not None and nbytes is not None:
            if self.src is None or self.nbytes is None:
                self.src = np.zeros_like(self.addr)
                self.nbytes = np.zeros_like(self.addr)
            self.src[s] = src
            self.nbytes[s] = nbytes
        self.n = need
        return np.arange(s.start, s.stop, dtype=np.int64)

    def _equal(self, ids: Any, addr: I64, active: B8, src: I64 | None, nbytes: I64 | None) -> Any:
        """Whether kept rows ``ids`` equal the given rows, row by row."""
        same = (self.addr[ids] == addr).all(axis=1) & (self.active[ids] == active).all(axis=1)
        if src is not None and nbytes is not None:
            if self.src is None or self.nbytes is None:
                return same & ~(src.any(axis=1) | nbytes.any(axis=1))
            same &= (self.src[ids] == src).all(axis=1) & (self.nbytes[ids] == nbytes).all(axis=1)
        elif self.src is not None and self.nbytes is not None:
            same &= ~(self.src[ids].any(axis=1) | self.nbytes[ids].any(axis=1))
        return same

    def add(self, addr: I64, active: B8, src: I64 | None = None, nbytes: I64 | None = None) -> Any:
        """The row number of each given row, new rows kept."""
        h = _hash(addr, active, src, nbytes)
        uh, first, inv = np.unique(h, return_index=True, return_inverse=True)
        inv = inv.reshape(-1)

        def part(a: Any, at: Any) -> Any:
            return None if a is None else a[at]

        # a row equal to the first of its hash within the call takes that one's number
        lead = first[inv]
        alike = (addr[lead] == addr).all(axis=1) & (active[lead] == active).all(axis=1)
        if src is not None and nbytes is not None:
            alike &= (src[lead] == src).all(axis=1) & (nbytes[lead] == nbytes).all(axis=1)
        found = np.array([self._by_hash.get(x, -1) for x in uh.tolist()], dtype=np.int64)
        known = found >= 0
        if known.any():
            at = first[known]
            equal = self._equal(found[known], addr[at], active[at], part(src, at), part(nbytes, at))
            known[np.flatnonzero(known)[~equal]] = False  # a collision: kept as a new row
        number = found
        fresh = np.flatnonzero(~known)
        if len(fresh):
            at = first[fresh]
            number[fresh] = self._append(addr[at], active[at], part(src, at), part(nbytes, at))
            for k in fresh.tolist():
                self._by_hash.setdefault(int(uh[k]), int(number[k]))
        ids = number[inv]
        if not alike.all():  # rows whose hash another row of the call had: kept alone
            odd = np.flatnonzero(~alike)
            ids[odd] = self._append(addr[odd], active[odd], part(src, odd), part(nbytes, odd))
        return ids
