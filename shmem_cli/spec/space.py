"""The iteration space: every (loop iteration, warp) request of an access, in chunks.

Threads form warps by linear id ``x + y*X + z*X*Y``. Loops nest in the order
written, the last one innermost. Each chunk covers whole loop iterations and is
evaluated with NumPy broadcasting: loop values are (C, 1) columns, thread
coordinates (1, T) rows, so an expression costs one array operation per node.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache, lru_cache
from math import prod
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeAlias, TypeVar

import numpy as np

from ..plumbing.frozen import frozen

if TYPE_CHECKING:
    import numpy.typing as npt

from ..hardware.engine import AccessKind
from ..plumbing.errors import ShmemError, shorten
from .compile import AccessDecl, Located, SpecFile
from .expr import EvalFault, Value
from .layout import ArrayLayout, Layout

I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"
TidT = TypeVar("TidT", int, "npt.NDArray[np.int64]")

MAX_LANE_ACCESSES = 1 << 31  # per access: about two billion lane-accesses
CHUNK_LANES = 1 << 16  # 64K lanes: a chunk's arrays stay near the L2 cache (docs/performance.md)


@cache
def keep_freed_memory() -> None:
    """Let the C library reuse the memory of freed chunk arrays.

    Every chunk allocates the same temporaries again. By default glibc maps each
    large one fresh from the kernel and unmaps it when it is freed, so every chunk
    pays a page fault per 4 KiB touched: about a third of the run time of a large
    spec. Keeping freed blocks (up to 64 MiB each) for reuse avoids that; it does
    not raise the peak memory, which is one chunk's arrays either way. Where the C
    library is not glibc this does nothing.
    """
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
        libc.mallopt(m_mmap_threshold, 64 << 20)
        libc.mallopt(m_trim_threshold, 128 << 20)
    except (OSError, AttributeError):
        pass


def thread_index(tid: TidT, block: tuple[int, int, int]) -> tuple[TidT, TidT, TidT]:
    """``threadIdx`` (x, y, z) of linear thread id ``tid`` (an int or an array):
    tid = x + y*X + z*X*Y."""
    x, y, _ = block
    return tid % x, (tid // x) % y, tid // (x * y)


@lru_cache(maxsize=64)
def thread_arrays(block: tuple[int, int, int], warp_size: int) -> Mapping[str, I64]:
    """The per-thread names of a block as (1, threads) rows, read-only: shared by every
    access and spec with this block (and their ranges read once, shmem_cli.spec.expr.evaluate)."""
    tid = np.arange(prod(block), dtype=np.int64)[None, :]
    tx, ty, tz = thread_index(tid, block)
    return MappingProxyType(
        {
            "threadIdx.x": read_only(tx),
            "threadIdx.y": read_only(ty),
            "threadIdx.z": read_only(tz),
            "tid": read_only(tid),
            "lane": read_only(tid % warp_size),
            "warp": read_only(tid // warp_size),
        }
    )


def read_only(a: I64) -> I64:
    """``a`` as a read-only array that owns its data: the expression evaluator then reads
    its range once for all the expressions of a chunk (shmem_cli.spec.expr.evaluate)."""
    out = a if a.flags.owndata else a.copy()
    out.flags.writeable = False
    return out


@frozen
class Batch:
    """Requests of a run of whole loop iterations: rows are (iteration, warp) pairs."""

    first_iteration: int
    iterations: int
    addr: I64  # (iterations * warps, 32) byte addresses
    active: B8  # (iterations * warps, 32)


@frozen
class Space:
    """The iteration space of one access of one variant."""

    spec: SpecFile
    layout: Layout
    access: AccessDecl

    @property
    def threads(self) -> int:
        return self.layout.threads

    @property
    def warps(self) -> int:
        return -(-self.threads // self.spec.arch.warp_size)

    @property
    def iterations(self) -> int:
        return prod(lp.count for lp in self.access.loops)

    @property
    def lane_accesses(self) -> int:
        return self.iterations * self.threads

    @property
    def array(self) -> ArrayLayout:
        return self.layout.arrays[self.access.array]

    @property
    def kind(self) -> AccessKind:
        """What one lane of the access does, for the engine."""
        acc, arch = self.access, self.spec.arch
        size = arch.ldmatrix_row_bytes if acc.is_matrix else self.array.esize
        return AccessKind(op=acc.op, size=size, atomic=acc.atomic, matrices=acc.matrices)

    def check_size(self) -> None:
        for lp in self.access.loops:
            if lp.count == 0:
                raise ShmemError(
                    f"loop {lp.describe()} runs no iteration", path=self.spec.path, pos=lp.pos
                )
        if self.lane_accesses > MAX_LANE_ACCESSES:
            raise ShmemError(
                f"access {shorten(self.access.name)!r} covers "
                f"{self.lane_accesses:.3g} lane-accesses "
                f"({self.iterations} iterations x {self.threads} threads); the limit is "
                f"{MAX_LANE_ACCESSES} (2^31) per access",
                path=self.spec.path,
                pos=self.access.loops[0].pos if self.access.loops else self.access.pos,
            )

    def loop_values(self, iteration: int) -> tuple[tuple[str, int], ...]:
        out = []
        rest = iteration
        for lp in reversed(self.access.loops):
            out.append((lp.var, int(lp.value_at(rest % lp.count))))
            rest //= lp.count
        return tuple(reversed(out))

    def thread_env(self) -> dict[str, Value]:
        x, y, z = self.layout.block
        return {
            **thread_arrays(self.layout.block, self.spec.arch.warp_size),
            "blockDim.x": x,
            "blockDim.y": y,
            "blockDim.z": z,
            **self.layout.params,
        }

    def batches(self, chunk_lanes: int | None = None) -> Iterator[Batch]:
        self.check_size()
        base_env = self.thread_env()
        per_chunk = max(1, (chunk_lanes or CHUNK_LANES) // max(1, self.threads))
        total = self.iterations
        if total > per_chunk:
            keep_freed_memory()
        for start in range(0, total, per_chunk):
            count = min(per_chunk, total - start)
            yield self.batch(base_env, start, count)

    def chunk_env(self, base_env: Mapping[str, Value], start: int, count: int) -> dict[str, Value]:
        """``base_env`` plus each loop variable as a (count, 1) column: iterations
        start..start+count-1."""
        env = dict(base_env)
        rest = np.arange(start, start + count, dtype=np.int64)[:, None]
        for lp in reversed(self.access.loops):
            env[lp.var] = read_only(lp.value_at(rest % lp.count))
            rest = rest // lp.count
        return env

    def lanes(self, env: dict[str, Value], start: int, count: int) -> tuple[B8 | None, B8 | None]:
        """(predicate, live) of a chunk from :meth:`chunk_env`, each (count, threads) or None
        for all lanes.

        predicate: the lanes that run the instruction (``when``); live: the lanes whose
        addresses the instruction reads, the engine's active lanes (for ldmatrix/stmatrix
        only lanes 8m..8m+7 give a row address, ``AccessKind.address_lanes``, and ``when``
        must be the same for all lanes of a warp). This is the one place the rule is applied.
        Raises the located ShmemError of a fault in ``when`` or a non-uniform warp.
        """
        shape = (count, self.threads)
        acc = self.access
        predicate = None
        if acc.when is not None:
            predicate = np.broadcast_to(self._eval(acc.when, env, None, start, shape) != 0, shape)
        live = predicate
        if acc.is_matrix:
            self._check_warp_uniform(
                np.ones(shape, dtype=bool) if predicate is None else predicate, start
            )
            address_lanes = self.kind.address_lanes(self.spec.arch)[env["lane"]]
            live = np.broadcast_to(
                address_lanes if predicate is None else predicate & address_lanes, shape
            )
        return predicate, live

    def batch(self, base_env: dict[str, Value], start: int, count: int) -> Batch:
        env = self.chunk_env(base_env, start, count)
        shape = (count, self.threads)
        acc = self.access
        arch = self.spec.arch
        matrix = acc.is_matrix
        predicate, live = self.lanes(env, start, count)
        addr = self._addresses(env, live, start, shape)
        if matrix:
            misaligned = (addr % arch.ldmatrix_row_bytes != 0) & live
            if misaligned.any():
                c, t = np.argwhere(misaligned)[0]
                raise ShmemError(
                    f"{acc.op} row address {int(addr[c, t])} of {self._who(int(c), int(t), start)} "
                    "is not 16-byte aligned (each lane gives the start of a 16-byte row)",
                    path=self.spec.path,
                    pos=acc.index[-1].pos,
                )
        active = np.ones(shape, dtype=bool) if live is None else live
        warps = self.warps
        pad = warps * arch.warp_size - self.threads
        if pad:
            addr = np.pad(addr, ((0, 0), (0, pad)))
            active = np.pad(active, ((0, 0), (0, pad)))
        rows = count * warps
        return Batch(
            first_iteration=start,
            iterations=count,
            addr=np.ascontiguousarray(addr.reshape(rows, arch.warp_size)),
            active=np.ascontiguousarray(active.reshape(rows, arch.warp_size)),
        )

    def _addresses(
        self, env: dict[str, Value], live: B8 | None, start: int, shape: tuple[int, int]
    ) -> I64:
        """Byte addresses of every (iteration, thread); indices are bounds-checked where live."""
        arr = self.array
        indices: list[I64] = []
        for k, loc in enumerate(self.access.index):
            # any shape that broadcasts to ``shape``; ``known`` bounds every element
            idx, known = self._eval_with_range(loc, env, live, start, shape)
            limit = arr.padded_shape[k]
            proved = known is not None and known[0] >= 0 and known[1] < limit  # no scan needed
            if not proved and idx.size and (idx.min() < 0 or idx.max() >= limit):
                bad = (idx < 0) | (idx >= limit)
                bad = np.broadcast_to(bad if live is None else bad & live, shape)
                if bad.any():
                    self._fault_oob(loc, k, np.broadcast_to(idx, shape), bad, limit, start)
            indices.append(idx)
        return np.broadcast_to(arr(*indices), shape)

    def _eval(
        self,
        loc: Located,
        env: dict[str, Value],
        live: B8 | None,
        start: int,
        shape: tuple[int, int],
    ) -> I64:
        return self._eval_with_range(loc, env, live, start, shape)[0]

    def _eval_with_range(
        self,
        loc: Located,
        env: dict[str, Value],
        live: B8 | None,
        start: int,
        shape: tuple[int, int],
    ) -> tuple[I64, tuple[int, int] | None]:
        try:
            value, known = loc.expr.evaluate_with_range(env, live)
            return np.asarray(value, dtype=np.int64), known
        except EvalFault as fault:
            where = np.asarray(fault.where)
            hits = (
                np.argwhere(np.broadcast_to(where, shape))
                if where.ndim
                else np.zeros((1, 2), dtype=np.int64)
            )
            c, t = (int(v) for v in hits[0]) if len(hits) else (0, 0)
            raise ShmemError(
                f"{fault.message} in {shorten(loc.text)!r} for {self._who(c, t, start)}",
                path=self.spec.path,
                pos=loc.pos.shifted(fault.node.col) if loc.pos else None,
            ) from None

    def _who(self, c: int, t: int, start: int) -> str:
        """Thread ``t`` in row ``c`` of the chunk from iteration ``start``, for error messages."""
        tx, ty, tz = thread_index(t, self.layout.block)
        ws = self.spec.arch.warp_size
        return f"thread ({tx},{ty},{tz}) (warp {t // ws}, lane {t % ws})" + self._at(start + c)

    def _at(self, iteration: int) -> str:
        """`` at k=0, j=3``: the loop values of a flat iteration index ('' without loops)."""
        values = self.loop_values(iteration)
        return " at " + ", ".join(f"{k}={v}" for k, v in values) if values else ""

    def _fault_oob(self, loc: Located, k: int, idx: I64, bad: B8, limit: int, start: int) -> None:
        c, t = (int(v) for v in np.argwhere(bad)[0])
        value = int(idx[c, t])
        arr = self.array
        kind = "negative" if value < 0 else "out of bounds"
        raise ShmemError(
            f"index {k} of {arr.name}{list(arr.padded_shape)} is {value} ({kind}; valid "
            f"0..{limit - 1}) for {self._who(c, t, start)}{self._inclusive_hint(start + c)}",
            path=self.spec.path,
            pos=loc.pos,
        )

    def _inclusive_hint(self, iteration: int) -> str:
        """A hint when the faulting iteration is the last of a range loop: ranges include
        their end, and writing the C bound ``0..N`` for ``i < N`` runs one too far."""
        values = dict(self.loop_values(iteration))
        for lp in self.access.loops:
            if lp.values is None and lp.stop > lp.start and values.get(lp.var) == lp.stop:
                return (
                    f" (loop ranges include their end: {lp.var} = {lp.start}..{lp.stop} runs "
                    f"up to {lp.stop}; for i < {lp.stop} write {lp.start}..{lp.stop - lp.step})"
                )
        return ""

    def _check_warp_uniform(self, active: B8, start: int) -> None:
        ws = self.spec.arch.warp_size
        n = self.threads
        if n % ws:
            raise ShmemError(
                f"{self.access.op} is a warp-wide .sync.aligned instruction; the block has "
                f"{n} threads, not a whole number of warps",
                path=self.spec.path,
                pos=self.access.pos,
            )
        per_warp = active.reshape(active.shape[0], n // ws, ws)
        mixed = per_warp.any(axis=2) & ~per_warp.all(axis=2)
        if mixed.any():
            c, w = (int(v) for v in np.argwhere(mixed)[0])
            raise ShmemError(
                f"{self.access.op} is .sync.aligned: 'when' must be the same for all lanes of a "
                f"warp, but it differs inside warp {w}{self._at(start + c)}",
                path=self.spec.path,
                pos=self.access.when.pos if self.access.when else self.access.pos,
            )
