"""The distinct requests of one SASS instruction, each kept once.

A grid's blocks, and a loop's iterations, repeat the same warp-level requests: the same
lane addresses with the same active lanes (and for cp.async the same global sources).
:class:`DistinctRows` keeps each distinct row once and gives every request the number of
its row, so that a 16,384-block launch keeps, and the engine costs, only the requests
that differ. Rows are found again by a 64-bit hash of their contents and always compared
in full: two rows share a number only when they are equal.

Beside them, what makes and holds rows: :func:`warp_rows` turns one execution by a set of
threads into a row per warp, :func:`warp_or` ORs a value over each warp's threads (the
emulator's taint and convergence masks use it too), and :class:`Allowance` is the bytes a
trace's rows and per-request arrays may still take (:class:`RecordsFull` past it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"
U8: TypeAlias = "npt.NDArray[np.uint8]"

# odd multipliers of each lane's fields in the hash (fixed: the hash is the same every run)
_MIX = np.random.default_rng(0x5EED_B0A7).integers(1, 1 << 62, size=(4, 128), dtype=np.uint64)
_MIX |= np.uint64(1)
_MASK = (1 << 64) - 1  # the hash's sums wrap there
_PER_HASH = 100  # bytes of the table that finds a row again by its hash, per entry
_FEW = 64  # rows of one call grouped by their hashes in Python, not np.unique (a block's warps)


def spread(values: Any, n: int) -> Any:
    """``values`` as ``n`` values, one per thread: the array itself where it has that shape,
    else a read-only broadcast view (np.broadcast_to costs a few microseconds, more than the
    arithmetic of a warp: the one place the trace spreads a value over threads)."""
    v = np.asarray(values)
    return v if v.shape == (n,) else np.broadcast_to(v, (n,))


def _hash(addr: I64, active: B8, src: I64 | None, nbytes: I64 | None) -> Any:
    lanes = addr.shape[1]
    # a product with the multipliers (wrapping mod 2^64, as the sum of the lanes' products;
    # np.dot: the same sums, without the matmul ufunc's overhead on a warp's few rows)
    h = np.dot(addr.view(np.uint64), _MIX[0, :lanes])
    h += np.dot(active.view(np.uint8), _MIX[1, :lanes])
    if src is not None and nbytes is not None:
        h += np.dot(src.view(np.uint64), _MIX[2, :lanes])
        h += np.dot(nbytes.view(np.uint64), _MIX[3, :lanes])
    return h


_ROW_MIX: dict[int, tuple[Any, int]] = {}  # per lane count: the addresses' multipliers, and
# the active lanes' sum for a row of every lane on (every_lane's)


def _key(addr: I64, active: B8) -> int:
    """:func:`_hash` of a call's one row without a global side, as an int (the same sums,
    without its arrays; wrapping sums do not depend on their order, so np.vdot's is
    np.dot's; a row of every lane on, :func:`every_lane`'s, adds a sum made once)."""
    lanes = addr.shape[1]
    mix = _ROW_MIX.get(lanes)
    if mix is None:
        every = int(np.dot(np.ones(lanes, dtype=np.uint8), _MIX[1, :lanes]))
        mix = _ROW_MIX[lanes] = (np.ascontiguousarray(_MIX[0, :lanes]), every)
    h = int(np.vdot(addr.view(np.uint64), mix[0]))
    if active is _EVERY.get(lanes):
        return (h + mix[1]) & _MASK
    return (h + int(np.dot(active[0].view(np.uint8), _MIX[1, :lanes]))) & _MASK


def _part(a: Any, at: Any) -> Any:
    """``a[at]``, or None for no array."""
    return None if a is None else a[at]


def _rows_equal(a: Any, b: Any) -> Any:
    """Per row: are ``a`` and ``b`` equal in every lane (bool rows compared eight lanes at
    a time where they allow)?"""
    if (
        a.dtype == np.bool_
        and a.shape[1] % 8 == 0
        and a.flags.c_contiguous
        and b.flags.c_contiguous
    ):
        a, b = a.view(np.uint64), b.view(np.uint64)
    return (a == b).all(axis=1)


def resize(a: Any, rows: int) -> Any:
    """``a`` with ``rows`` rows: its own first, zeros after."""
    out = np.zeros((rows, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out


class WarpOr:
    """The per-warp OR of a set of threads (:func:`warp_or`): the warps they are in
    (ascending), the OR over each warp's threads (``ors``) and each thread's warp as an
    index into those two (``row``; ``ors[row]``: each thread's warp's OR)."""

    __slots__ = ("_row", "_ws", "ors", "warps")

    def __init__(self, warps: Any, ors: Any, row: Any, ws: int) -> None:
        self.warps, self.ors, self._row, self._ws = warps, ors, row, ws

    @property
    def row(self) -> Any:
        if self._row is None:  # whole warps: made when asked (the request rows need none)
            self._row = np.arange(len(self.warps) * self._ws) // self._ws
        return self._row


def warp_or(ids: Any, ws: int, values: Any) -> WarpOr:
    """The OR of ``values`` (one per thread, or one for all: a taint, a lane mask) over each
    warp's threads among ``ids`` (sorted: a warp's threads stand together) of ``ws``-lane
    warps. The one place the trace ORs a value over a warp (the taint of a request, of a
    decision, the lanes at a convergence barrier)."""
    n = len(ids)
    v = np.asarray(values)
    if n == 0:
        return WarpOr(ids // ws, np.zeros(0, dtype=v.dtype), np.zeros(0, dtype=np.intp), ws)
    first, last = int(ids[0]), int(ids[-1])
    if first // ws == last // ws:  # one warp (sorted: its ends tell)
        ors = np.bitwise_or.reduce(spread(v, n), keepdims=True) if v.ndim else None
        return WarpOr(ids[:1] // ws, _or_all(ors, v, 1), np.zeros(n, dtype=np.intp), ws)
    lead = ids[::ws]
    run = last - first + 1 == n and first % ws == 0  # (distinct, sorted: one run of threads)
    if n % ws == 0 and (
        run or (not (lead % ws).any() and (ids[ws - 1 :: ws] - lead == ws - 1).all())
    ):  # whole warps, every lane: a row each
        warps = lead // ws
        ors = np.bitwise_or.reduce(spread(v, n).reshape(-1, ws), axis=1) if v.ndim else None
        return WarpOr(warps, _or_all(ors, v, len(warps)), None, ws)
    warp = ids // ws
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.not_equal(warp[1:], warp[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    ors = np.bitwise_or.reduceat(spread(v, n), starts) if v.ndim else None
    return WarpOr(warp[starts], _or_all(ors, v, len(starts)), np.cumsum(new) - 1, ws)


def _or_all(ors: Any, v: Any, warps: int) -> Any:
    """``ors``, or where ``v`` is one value for all threads, that value for each warp."""
    return np.full(warps, v, dtype=v.dtype) if ors is None else ors


def warp_rows(
    tids: Any, ws: int, addr: I64, taint_arr: U8, src: I64 | None, src_bytes: I64 | None
) -> tuple[Any, I64, B8, Any, I64 | None, I64 | None]:
    """The rows of one execution by the threads ``tids`` (sorted) of ``ws``-lane warps: the
    warps that ran it, each one's lane addresses, active lanes and taint (the OR of its
    lanes', :func:`warp_or`), and for cp.async each lane's global source and source bytes
    (zeros where no lane ran). Threads of one warp without a global side (most steps) give
    the warp and its taint as ints (:func:`_one_warp_rows`)."""
    n = len(tids)
    first = int(tids[0]) if n else 0
    if n and src is None and int(tids[-1]) // ws == first // ws:
        return _one_warp_rows(tids, ws, addr, taint_arr)
    src_rows = byte_rows = None
    by_warp = warp_or(tids, ws, taint_arr)
    uw, t = by_warp.warps, by_warp.ors
    if len(uw) * ws == n:
        # whole warps, every lane: the rows are the addresses as they are
        rows = np.asarray(addr, dtype=np.int64).reshape(-1, ws)
        act = np.ones(rows.shape, dtype=bool)
        if src is not None and src_bytes is not None:
            src_rows = np.asarray(src, dtype=np.int64).reshape(-1, ws)
            byte_rows = np.asarray(src_bytes, dtype=np.int64).reshape(-1, ws)
    else:
        row, lanes = by_warp.row, tids % ws
        rows = np.zeros((len(uw), ws), dtype=np.int64)
        act = np.zeros((len(uw), ws), dtype=bool)
        rows[row, lanes] = addr
        act[row, lanes] = True
        if src is not None and src_bytes is not None:
            src_rows = np.zeros((len(uw), ws), dtype=np.int64)
            byte_rows = np.zeros((len(uw), ws), dtype=np.int64)
            src_rows[row, lanes] = src
            byte_rows[row, lanes] = src_bytes
    return uw, rows, act, t, src_rows, byte_rows


def _one_warp_rows(
    tids: Any, ws: int, addr: I64, taint: U8
) -> tuple[int, I64, B8, int, None, None]:
    """:func:`warp_rows` of threads of one warp with no global side (most steps): the warp
    and the taint as ints, not arrays (the recorder indexes and ORs with them)."""
    w = int(tids[0]) // ws
    if len(tids) == ws:  # every lane (sorted, distinct): the row is the addresses
        row = np.asarray(addr, dtype=np.int64).reshape(1, ws)
        act = every_lane(ws)
    else:
        lanes = tids - w * ws
        row = np.zeros((1, ws), dtype=np.int64)
        act = np.zeros((1, ws), dtype=bool)
        row[0, lanes] = addr
        act[0, lanes] = True
    return w, row, act, taint_or(taint), None, None


def taint_or(taint: Any) -> int:
    """The OR of a taint (an int, or an array of them) as an int."""
    if isinstance(taint, int):
        return taint
    return int(np.bitwise_or.reduce(taint, axis=None)) if np.count_nonzero(taint) else 0


_EVERY: dict[int, B8] = {}


def every_lane(ws: int) -> B8:
    """A read-only (1, ws) row of active lanes, all true (made once per warp size)."""
    act = _EVERY.get(ws)
    if act is None:
        act = _EVERY[ws] = np.ones((1, ws), dtype=bool)
        act.flags.writeable = False
    return act


class RecordsFull(Exception):
    """The records would pass their bound: raised before anything more is allocated."""


class Allowance:
    """The bytes a trace's records may still take: every array asks before it grows (its
    copy included), so the bound holds at each allocation, not only when the emulator next
    looks."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit  # None: no bound
        self.left = limit
        #: the bytes taken since the last :meth:`free`, bound or not: what the emulator's
        #: budget looks at (a sum over every instruction's records at each look was
        #: quadratic: 100,000 instructions that each record, minutes)
        self.taken = 0

    def free(self) -> None:
        """Every array that asked was dropped: the whole bound is free again."""
        self.left = self.limit
        self.taken = 0

    def take(self, nbytes: int) -> None:
        """``nbytes`` more, or :class:`RecordsFull`."""
        if self.left is not None:
            if nbytes > self.left:
                raise RecordsFull
            self.left -= nbytes
        self.taken += nbytes

    def capacity(self, cap: int, need: int, row_bytes: int) -> int:
        """The rows an array of ``cap`` rows (``row_bytes`` each) grows to for ``need``,
        counting the copy: the old array is held while the new one is filled, so the whole
        new array must fit in the bytes left. Twice ``cap``, or where that does not fit,
        about half of what does (so the other arrays keep room, and the steps shrink
        geometrically: a few dozen at most, never one per row); :class:`RecordsFull` when
        ``need`` does not fit."""
        new = max(need, 2 * cap)  # (from exactly what is needed: most arrays stay small)
        if self.left is not None:
            fits = self.left // row_bytes  # rows of a new array that fit beside the old
            if need > fits:
                raise RecordsFull
            if new > fits:
                new = max(need, (cap + fits) // 2)
        self.take((new - cap) * row_bytes)
        return new


class DistinctRows:
    """Distinct (lanes)-wide rows: addresses, active lanes, for cp.async the global side."""

    def __init__(self, lanes: int, allowance: Allowance | None = None) -> None:
        self.lanes = lanes
        self.allowance = allowance if allowance is not None else Allowance()
        self.n = 0
        self.addr: I64 = np.zeros((0, lanes), dtype=np.int64)
        self.active: B8 = np.zeros((0, lanes), dtype=bool)
        self.src: I64 | None = None  # cp.async: each lane's global source address
        self.nbytes: I64 | None = None  # and how many source bytes it reads
        self._by_hash: dict[int, int] = {}

    @property
    def nbytes_held(self) -> int:
        arrays = (self.addr, self.active, self.src, self.nbytes)
        return sum(a.nbytes for a in arrays if a is not None) + _PER_HASH * len(self._by_hash)

    @property
    def row_bytes(self) -> int:
        """What one more row takes: its arrays' share and an entry of the hash table."""
        return (9 + (16 if self.src is not None else 0)) * self.lanes + _PER_HASH

    def _append(self, addr: I64, active: B8, src: I64 | None, nbytes: I64 | None) -> Any:
        k = len(addr)
        need = self.n + k
        if src is not None and nbytes is not None and self.src is None:
            # the global side appears: zeros for the rows there are, then it grows with them
            self.allowance.take(16 * self.lanes * len(self.addr))
            self.src = np.zeros_like(self.addr)
            self.nbytes = np.zeros_like(self.addr)
        if need > len(self.addr):
            cap = self.allowance.capacity(len(self.addr), need, self.row_bytes)
            self.addr = resize(self.addr, cap)
            self.active = resize(self.active, cap)
            if self.src is not None and self.nbytes is not None:
                self.src = resize(self.src, cap)
                self.nbytes = resize(self.nbytes, cap)
        s = slice(self.n, need)
        self.addr[s] = addr
        self.active[s] = active
        if src is not None and nbytes is not None:
            assert self.src is not None and self.nbytes is not None
            self.src[s] = src
            self.nbytes[s] = nbytes
        self.n = need
        return np.arange(s.start, s.stop, dtype=np.int64)

    def _equal(
        self, ids: list[int], addr: I64, active: B8, src: I64 | None, nbytes: I64 | None
    ) -> list[bool]:
        """Whether kept rows ``ids`` equal the given rows, row by row (one row: its bytes
        compared, cheaper than the arrays' comparison on a warp)."""
        if len(ids) == 1 and (src is None) == (self.src is None):
            k = ids[0]
            same = self.addr[k].tobytes() == addr[0].tobytes()
            same = same and self.active[k].tobytes() == active[0].tobytes()
            if same and src is not None and nbytes is not None:
                assert self.src is not None and self.nbytes is not None
                same = self.src[k].tobytes() == src[0].tobytes()
                same = same and self.nbytes[k].tobytes() == nbytes[0].tobytes()
            return [same]
        at = np.array(ids, dtype=np.int64)
        equal = (self.addr[at] == addr).all(axis=1) & (self.active[at] == active).all(axis=1)
        if src is not None and nbytes is not None:
            if self.src is None or self.nbytes is None:
                equal &= ~(src.any(axis=1) | nbytes.any(axis=1))
            else:
                equal &= (self.src[at] == src).all(axis=1) & (self.nbytes[at] == nbytes).all(axis=1)
        elif self.src is not None and self.nbytes is not None:
            equal &= ~(self.src[at].any(axis=1) | self.nbytes[at].any(axis=1))
        return list(equal.tolist())

    def _numbers(
        self, keys: list[int], at: Any, addr: I64, active: B8, src: I64 | None, nbytes: I64 | None
    ) -> list[int]:
        """The one rule that finds rows again: the row number of each row ``at[j]`` of the
        call, whose hash is ``keys[j]`` (the keys all differ, ascending): the kept row of
        that hash where the two are equal, else the row appended, in the order of the keys
        (a collision with a kept row of another content: kept as a new row)."""
        number = [self._by_hash.get(k, -1) for k in keys]
        known = [j for j, x in enumerate(number) if x >= 0]
        if known:
            rows = at if len(known) == len(at) else np.asarray(at)[known]
            same = self._equal([number[j] for j in known], *_parts(rows, addr, active, src, nbytes))
            for j, equal in zip(known, same, strict=True):
                if not equal:
                    number[j] = -1
        fresh = [j for j, x in enumerate(number) if x < 0]
        if fresh:
            rows = at if len(fresh) == len(at) else np.asarray(at)[fresh]
            new = self._append(*_parts(rows, addr, active, src, nbytes))
            for j, x in zip(fresh, new.tolist(), strict=True):
                number[j] = x
                self._by_hash.setdefault(keys[j], x)
        return number

    def add_row(self, addr: I64, active: B8) -> int:
        """:meth:`add` of one row without a global side ((1, lanes) arrays): its number (a
        row kept already, the usual case in a loop, found without :meth:`_numbers`' lists)."""
        key = _key(addr, active)
        k = self._by_hash.get(key)
        if (
            k is not None
            and self.src is None
            and self.addr[k].tobytes() == addr.tobytes()
            and self.active[k].tobytes() == active.tobytes()
        ):
            return k
        return self._numbers([key], [0], addr, active, None, None)[0]

    def kept(self, addr: I64, active: B8) -> int | None:
        """The number :meth:`add_row` of this row finds at once (its hash's), or None."""
        return self._by_hash.get(_key(addr, active))

    def add(
        self,
        addr: I64,
        active: B8,
        src: I64 | None = None,
        nbytes: I64 | None = None,
        period: int = 0,
    ) -> Any:
        """The row number of each given row, new rows kept. ``period``: rows that may repeat
        every ``period`` rows (a batch's CTAs run the same warps): where every row equals the
        one ``period`` rows before it, only the first ``period`` are looked up."""
        n = len(addr)
        if src is None and 0 < period < n and n % period == 0:
            first = addr[:period]
            if (addr.reshape(-1, period, self.lanes) == first).all() and (
                active.reshape(-1, period, self.lanes) == active[:period]
            ).all():
                return np.tile(self.add(first, active[:period]), n // period)
        if n == 1 and src is None:  # a warp's one request (most steps)
            return np.array([self.add_row(addr, active)], dtype=np.int64)
        raw, act = addr.tobytes(), active.tobytes()  # every row the first's (a wgmma's warps)
        alike = n > 1 and raw == raw[: len(raw) // n] * n and act == act[: len(act) // n] * n
        if alike and src is None:  # one row looked up
            return np.full(n, self.add_row(addr[:1], active[:1]), dtype=np.int64)
        h = _hash(addr, active, src, nbytes)
        if n <= _FEW:  # a block's few warps: their hashes grouped here, cheaper than np.unique
            keys = h.tolist()
            lead_of = dict(zip(reversed(keys), range(n - 1, -1, -1), strict=True))  # first rows
            uh = sorted(lead_of)
            first = np.array([lead_of[key] for key in uh], dtype=np.intp)
            if len(uh) < n:
                rank = {key: r for r, key in enumerate(uh)}
                inv = np.array([rank[key] for key in keys], dtype=np.intp)
        else:
            unique, first, inv = np.unique(h, return_index=True, return_inverse=True)
            uh, inv = unique.tolist(), inv.reshape(-1)
        number = self._numbers(uh, first, addr, active, src, nbytes)
        if len(uh) == n:  # every row its own hash: each is the first of it
            ids = np.empty(n, dtype=np.int64)
            ids[first] = number
            return ids
        # a row equal to the first of its hash within the call takes that one's number
        lead = first[inv]
        alike = _rows_equal(np.take(addr, lead, axis=0), addr)
        alike &= _rows_equal(np.take(active, lead, axis=0), active)
        if src is not None and nbytes is not None:
            alike &= (src[lead] == src).all(axis=1) & (nbytes[lead] == nbytes).all(axis=1)
        ids = np.array(number, dtype=np.int64)[inv]
        if not alike.all():  # rows whose hash another row of the call had: kept alone
            odd = np.flatnonzero(~alike)
            ids[odd] = self._append(addr[odd], active[odd], _part(src, odd), _part(nbytes, odd))
        return ids


def _parts(
    at: Any, addr: I64, active: B8, src: I64 | None, nbytes: I64 | None
) -> tuple[I64, B8, I64 | None, I64 | None]:
    """Rows ``at`` of a call's arrays (the arrays themselves for a call of one row)."""
    if len(at) == 1 == len(addr):
        return addr, active, src, nbytes
    return addr[at], active[at], _part(src, at), _part(nbytes, at)
