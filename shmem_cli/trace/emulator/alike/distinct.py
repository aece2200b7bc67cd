"""What a step kept is (:class:`Step`, its :class:`Load`'s), where its sources come from, and
their distinct blocks: a step evaluated once per distinct block.

Each load of a step (:class:`Step`) reads, per group of threads, a constant and a
vector: a whole one, or one a step kept makes (:func:`planned` says which, a :class:`Plan`).
An instruction evaluated over the candidate blocks (:mod:`.vectors`, through :mod:`.shadow`)
gives each (group, block) pair a value that depends on that pair's sources alone (a window
of blocks gives the values the whole grid does). Where every source is a constant or a whole
vector, the blocks in which those vectors hold the same values give the same results: over
a 32 x 16 grid a vector of the x axis holds 32 distinct values, not 512, and a causal
attention's rounds evaluated each instruction for all 512 blocks, each of its 128 threads
its own group (a round of one block evaluated 5 million values to read 19 thousand). So the
step runs once per distinct block (:meth:`Distinct.of`: one column of the vectors' values
per block) and its values are spread back over every block (:func:`spread`; each distinct
row interned once, :func:`interned`): the same values, bit for bit. A vector made so is
kept as a :class:`Spread` (its values at the distinct blocks and the map of each block's
distinct block, one map per content: :class:`Maps`), read as the whole array would be: the
many groups of a compaction's loop over 4,096 blocks took the vectors' 128 MiB whole.

The distinct columns are found by a hash of each column (a product with fixed odd 64-bit
factors, mod 2^64) and then checked column by column against the column they are taken
for: a hash collision leaves the step run over every block, never two blocks merged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from ....plumbing.frozen import frozen

#: a step runs once per distinct block only where the distinct blocks are at most this share
#: of its blocks (else the spreading back costs more than it saves)
SHARE = 0.5
#: the maps kept for the next step reading the same vectors, at most this many blocks over
#: all of them (a map holds an index per block)
KEPT = 1 << 22
#: the hash's factors: odd 64-bit constants (the golden ratio's, and splitmix64's), one per
#: vector in turn
_FACTORS = np.array(
    [0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xD6E8FEB86659FD93],
    dtype=np.uint64,
)

#: (each distinct block's position in the window, each block's distinct block), or None
Map = tuple[Any, Any] | None

#: a select's guard: the predicate register (kind, index) and whether it is negated
Guard = tuple[str, int, bool]

if TYPE_CHECKING:
    import numpy.typing as npt

    Loaded = tuple[str, int, npt.NDArray[Any]]  # (kind, index, values per (group, block))


class Stepper(Protocol):
    """What runs one instruction over many (group, block) pairs: :class:`.shadow.Shadow`."""

    def step(
        self,
        m: int,
        loads: Sequence[Loaded],
        rows: Sequence[tuple[str, int]],
        total: int,
        guard: Guard | None = None,
    ) -> dict[tuple[str, int], Any]: ...


@frozen
class Load:
    """What a step reads from one register, per group: ``k`` and a vector (-1: none)."""

    kind: str
    index: int
    ks: Any  # uint32 per group (bool for a predicate)
    vids: Any  # int per group


@frozen
class Step:
    """Instruction ``m`` over ``groups`` groups: its loads and the registers it writes, and
    its guard where the step is a select (each register written where the guard holds, its
    loaded value kept elsewhere: :mod:`.guarded`)."""

    m: int
    loads: tuple[Load, ...]
    rows: tuple[tuple[str, int], ...]
    groups: int
    guard: Guard | None = None


@frozen
class Plan:
    """Where a load's groups take their vectors: per (step, register) a step made, the
    groups and the step's groups they are; the whole vectors read, the groups that read
    one (``at``) and which of them each reads (``row``)."""

    made: dict[tuple[int, int], tuple[Any, Any]]
    whole: tuple[int, ...]
    at: Any
    row: Any


def planned(vids: Any, values: Sequence[Any], kept: type) -> Plan:
    """Where each group of a load (``vids``: its vector's id per group, below 0 none) takes
    its values: a vector of ``values`` kept as a step (a ``kept``, with the ``step``,
    ``row`` and ``group`` that make it) or a whole one."""
    vids = np.asarray(vids)
    gs = np.flatnonzero(vids >= 0)
    used, which = np.unique(vids[gs], return_inverse=True)
    which = which.reshape(-1)
    held = [values[v] for v in used.tolist()]
    steps = np.array([isinstance(v, kept) for v in held], dtype=bool)
    made: dict[tuple[int, int], tuple[list[Any], list[Any]]] = {}
    for u in np.flatnonzero(steps).tolist():  # by the step and register that make them
        v, at = held[u], gs[which == u]
        got = made.setdefault((v.step, v.row), ([], []))
        got[0].append(at)
        got[1].append(np.full(len(at), v.group))
    whole = ~steps[which]
    return Plan(
        {k: (np.concatenate(at), np.concatenate(group)) for k, (at, group) in made.items()},
        tuple(used[~steps].tolist()),
        gs[whole],
        (np.cumsum(~steps) - 1)[which[whole]],
    )


class Distinct:
    """The distinct blocks of sets of whole vectors, kept by the vectors' ids and window."""

    def __init__(self) -> None:
        self._kept: dict[tuple[tuple[int, ...], int, int], Map] = {}
        self._size = 0

    def of(self, plans: Sequence[Plan], values: Sequence[Any], lo: int, hi: int) -> Map:
        """The distinct blocks ``lo``..``hi`` of the whole vectors a step's loads read
        (``plans``: :class:`Plan`, over ``values``, the vectors by id): (each
        distinct block's first position in the window, each block's distinct one), or None
        where a load reads a vector kept as a step, or the distinct blocks are not few
        enough (:data:`SHARE`), or a hash collided."""
        if hi - lo < 2 or any(plan.made for plan in plans):
            return None
        vids = tuple(sorted({v for plan in plans for v in plan.whole}))
        key = (vids, lo, hi)
        if key in self._kept:
            return self._kept[key]
        got = _distinct([values[v] for v in vids], lo, hi)
        if self._size + hi - lo > KEPT:
            self._kept.clear()
            self._size = 0
        self._kept[key] = got
        self._size += hi - lo + len(vids)
        return got


def _distinct(values: Sequence[Any], lo: int, hi: int) -> Map:
    """The map of :meth:`Distinct.of`, a vector at a time (the memory of one block vector).
    The vectors held spread on one map stand in it as that map: two blocks it gives the same
    distinct block hold the same value in each of them."""
    if not values:
        return None
    maps = {id(v.at): v.at for v in values if isinstance(v, Spread)}
    values = [*(v for v in values if not isinstance(v, Spread)), *maps.values()]
    h = np.zeros(hi - lo, dtype=np.uint64)
    for k, v in enumerate(values):
        factor = _FACTORS[k % len(_FACTORS)] + np.uint64(2 * (k // len(_FACTORS)))
        h = h * np.uint64(0x100000001B3) + np.asarray(v[lo:hi]).astype(np.uint64) * factor
        if k == 0 and len(values) > 1 and len(np.unique(h)) > SHARE * (hi - lo):
            return None  # (one vector alone has too many: the blocks of all only more)
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    if len(first) > SHARE * (hi - lo):
        return None
    inverse = inverse.reshape(-1)
    for v in values:  # every block holds its distinct block's values, or no map
        row = np.asarray(v[lo:hi])
        if not np.array_equal(row[first][inverse], row):
            return None
    return first, inverse


class Spread:
    """A whole block vector held as its values at the distinct blocks (``small``) and each
    block's distinct block (``at``, one array for every row of a step that shares it): read
    as the whole array (``v[key]``, ``np.asarray(v)``), it takes the distinct blocks'
    memory, not the grid's (a warp's count of a ballot over 4,096 blocks: 3 values)."""

    __slots__ = ("at", "small")

    def __init__(self, small: Any, at: Any) -> None:
        self.small, self.at = small, at

    def __getitem__(self, key: Any) -> Any:
        return self.small[self.at[key]]

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        whole = self.small[self.at]
        return whole if dtype is None else whole.astype(dtype)

    def __len__(self) -> int:
        return len(self.at)

    @property
    def dtype(self) -> Any:
        return self.small.dtype

    @property
    def nbytes(self) -> int:
        return int(self.small.nbytes)


class Arc:
    """A compare's outcome over the blocks held as its threshold (:func:`.agree.arcs`): true
    in block ``b`` where ``D(b)``, a whole vector's value there (``base``, negated mod 2^32
    where ``negated``), lies on the arc of ``length`` values from ``start`` (mod 2^32); read
    as the bool array it stands for (``v[key]``, ``np.asarray(v)``)."""

    __slots__ = ("base", "length", "negated", "start")

    def __init__(self, base: Any, negated: bool, start: int, length: int) -> None:
        self.base, self.negated, self.start, self.length = base, negated, start, length

    def d(self, key: Any = slice(None)) -> Any:
        """``D`` at the blocks ``key`` (int64, 0..2^32-1)."""
        v = np.asarray(self.base[key]).astype(np.int64)
        return (-v) % (1 << 32) if self.negated else v

    def __getitem__(self, key: Any) -> Any:
        return (self.d(key) - self.start) % (1 << 32) < self.length

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        whole = self[slice(None)]
        return whole if dtype is None else whole.astype(dtype)

    def __len__(self) -> int:
        return len(self.base)

    @property
    def dtype(self) -> Any:
        return np.dtype(bool)

    @property
    def nbytes(self) -> int:
        return 64  # (its base is held apart)


def rows(held: Sequence[Any], cut: Any) -> Any:
    """The values at ``cut`` (a slice or the positions of blocks) of the whole vectors
    ``held``, a row each (as ``np.stack`` of each one's): those held spread on one map
    gathered through it together (a step's 256 groups' vectors over 4,096 blocks: one
    gather, not 256)."""
    shared: dict[tuple[int, int], list[int]] = {}
    for i, v in enumerate(held):
        if isinstance(v, Spread):
            shared.setdefault((id(v.at), len(v.small)), []).append(i)
    if len({v.dtype for v in held}) != 1 or all(len(i) < 2 for i in shared.values()):
        return np.stack([np.asarray(v[cut]) for v in held])
    first = np.asarray(held[0][cut])
    out = np.empty((len(held), len(first)), first.dtype)
    spread_ = {i for at in shared.values() for i in at}
    for i, v in enumerate(held):
        if i not in spread_:
            out[i] = v[cut]
    for at in shared.values():
        out[at] = np.stack([held[i].small for i in at])[:, held[at[0]].at[cut]]
    return out


def loaded(ks: Any, pred: bool, plan: Plan, src: Any, w: int) -> Any:
    """A load's values, groups x ``w`` blocks: each group's ``k``, plus (a predicate: in
    place of) the values ``src[plan.row]`` of the whole vector it reads (``src``: each whole
    vector's, a row each); the values of vectors kept as steps are set in after. Where every
    group reads a whole vector, made in place (a step's 256 groups over 4,096 blocks: two
    passes over them, not five)."""
    if len(plan.at) < len(ks) or not len(ks):
        out = np.repeat(ks[:, None], w, axis=1)
        if len(plan.at):
            out[plan.at] = src[plan.row] if pred else src[plan.row] + ks[plan.at, None]
        return out
    if len(src) == 1:  # (every group reads the same vector: a thread's k apart)
        out = np.empty((len(ks), w), ks.dtype)
        out[...] = src[0]
    else:
        out = src[plan.row].astype(ks.dtype, copy=False)
    if not pred:
        out += ks[:, None]
    return out


def agreeing(held: Sequence[tuple[Spread, int]], n: int) -> Any:
    """The blocks (of ``n``) in which each :class:`Spread` vector of ``held`` holds its value
    there: compared at their distinct blocks, then mapped back once per map (the watch's
    comparisons of a step's 256 vectors over 4,096 blocks read 8 values each)."""
    out = np.ones(n, dtype=bool)
    shared: dict[tuple[int, int], tuple[Any, Any]] = {}
    for v, value in held:
        key = (id(v.at), len(v.small))
        ok = v.small == value
        got = shared.get(key)
        shared[key] = (v.at, ok if got is None else got[1] & ok)
    for at, ok in shared.values():
        out &= ok[at]
    return out


class Maps:
    """Each block's distinct block of vectors held as :class:`Spread`: one array per content."""

    def __init__(self) -> None:
        self._held: dict[bytes, Any] = {}
        self.bytes = 0  # of the maps held

    def held(self, at: Any) -> tuple[Any, int]:
        """(The array held for map ``at``, the bytes newly held for it: 0 where held before)."""
        at = np.ascontiguousarray(at, dtype=np.int32)
        got = self._held.setdefault(at.tobytes(), at)
        new = at.nbytes if got is at else 0
        self.bytes += new
        return got, new


def spread(got: dict[Any, Any], at: Any) -> dict[Any, Any]:
    """Each register's values over the distinct blocks (groups x distinct blocks, or None)
    spread over every block (``at``: each block's distinct block; None: as they are)."""
    return got if at is None else {r: a if a is None else a[:, at] for r, a in got.items()}


def interned(a: Any, at: Any, intern: Callable[[Any], int]) -> list[int]:
    """The ids ``intern`` gives the rows of ``a`` (groups x distinct blocks, spread by ``at``;
    None: groups x blocks), each distinct row spread and interned once."""
    if at is None:
        return [intern(a[g]) for g in range(len(a))]
    keys = [a[g].tobytes() for g in range(len(a))]
    ids: dict[bytes, int] = {}
    for g, key in enumerate(keys):
        if key not in ids:
            ids[key] = intern(a[g][at])
    return [ids[key] for key in keys]
