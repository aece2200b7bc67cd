"""Guards on the block index proven to take the first block's outcome in the blocks of a grid.

A bounds check such as ``x = blockIdx.x * 32 + threadIdx.x; if (x < width)`` carries the
block index's taint, so the taint watch alone (:class:`..grid.Watch`) would run every
block. While the grid's first block, (0,0,0), runs watched, :class:`Affine` keeps beside
each register that depends on the block index its *form*: per thread, the integers
``k, kx, ky, kz`` with value = k + kx*blockIdx.x + ky*blockIdx.y + kz*blockIdx.z (mod 2^32)
in every block. A form is known only where the register's last writer makes such a sum
of sources whose forms are known: S2R of ``SR_CTAID``, MOV, IADD3, VIADD, IMAD (one factor
free of the block index), LEA, SHF.L by a constant (its low word), and their uniform
twins. Any other writer, a source of
unknown form, or taint of global memory or of an inexact value leaves it unknown; so does
a form whose k is not the value the register holds in block (0,0,0) (checked on every
write).

A compare (ISETP) keeps the first block's outcome for a thread in every block of the grid
when each operand, read as the compare reads it (signed or unsigned 32 bits), stays within
one 32-bit window over the whole grid, so that no block wraps it (a sum's least and
greatest values over the box [0, gx-1] x [0, gy-1] x [0, gz-1] lie at its corners), and
the difference of the two, then an exact sum of the block index, keeps its sign (or zero)
at every corner. Where it does not, but the difference moves along one axis alone, it keeps
the outcome up to the last block index before its sign changes along that axis; any other
compare keeps it at index 0 of every axis it reads (an operand of unknown form: of every
axis). So each predicate has, per thread, the highest block index per axis up to which it
holds block (0,0,0)'s value (:attr:`Affine.reach`): the whole grid for one free of taint,
the least over its inputs for one that ISETP or PLOP3 combines. A guard whose predicate
carries only the block index's taint narrows the box of blocks proven alike to its reach
(:meth:`..grid.Watch.guard`): those blocks run every instruction on the same threads as
the first; the others run (:mod:`.edges`). When in doubt the answer is no.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Imm, Operand, Reg, Special
from ..operands import Dest, read_u32
from ..state import PT, TAINT_BLOCK, Block, Idx

if TYPE_CHECKING:
    import numpy.typing as npt

U64: TypeAlias = "npt.NDArray[np.uint64]"
I64: TypeAlias = "npt.NDArray[np.int64]"
B8: TypeAlias = "npt.NDArray[np.bool_]"
#: (the form, 4 x threads: k, kx, ky, kz modulo 2^32; where it is known)
Form: TypeAlias = "tuple[U64, B8]"

_M = np.uint64(0xFFFFFFFF)
_WRAP = 1 << 32
#: an operand whose values over the grid spread past this cannot stay in one 32-bit window
_SPREAD = float(1 << 33)
_AXES = {"SR_CTAID.X": 1, "SR_CTAID.Y": 2, "SR_CTAID.Z": 3}
#: opcodes with a uniform twin (UIADD3 ...) that this module reads alike
_TWINS = frozenset({"IADD3", "IMAD", "LEA", "MOV", "SHF", "ISETP", "PLOP3"})
#: the writers whose result is a sum of their sources' forms
_SUMS = frozenset({"MOV", "IADD3", "VIADD", "IMAD", "LEA", "SHF"})
_COMPARES = frozenset({"EQ", "NE", "LT", "LE", "GT", "GE", "T", "F"})


def _opcode(ins: Instruction) -> str:
    """The opcode, a uniform twin read as its base (UIADD3 as IADD3, S2UR as S2R)."""
    op = ins.opcode
    if op == "S2UR":
        return "S2R"
    if op.startswith("U") and op[1:] in _TWINS:
        return op[1:]
    return op


def _sources(ops: Sequence[Operand]) -> tuple[Operand, list[Operand], list[Operand]]:
    """(destination, value sources, predicate operands) of an adder's operands."""
    preds: list[Operand] = [o for o in ops[1:] if isinstance(o, Reg) and o.kind in ("P", "UP")]
    values = [o for o in ops[1:] if not (isinstance(o, Reg) and o.kind in ("P", "UP"))]
    return ops[0], values, preds


class Affine:
    """The forms of the first block's registers and which of its predicates are
    grid-constant, kept step by step (:meth:`before`, then :meth:`after`)."""

    def __init__(
        self,
        grid: tuple[int, int, int],
        instructions: Sequence[Instruction],
        destinations: Sequence[tuple[Dest, ...]],
    ) -> None:
        self.top = np.array([max(0, g - 1) for g in grid], dtype=np.int64)  # far corner
        self.instructions = instructions
        self.destinations = destinations
        self.forms: dict[tuple[str, int], Form] = {}
        # per predicate, per thread and axis: the highest block index up to which the
        # predicate is proven to hold block (0,0,0)'s value (self.top: the whole grid)
        self.reach: dict[tuple[str, int], I64] = {}
        self._readers: dict[tuple[int, int], Callable[[Block, Idx], tuple[Any, Any]]] = {}
        self.proven = 0  # guarded executions proven to take the first block's outcome

    # --- what a guard asks -------------------------------------------------------------

    def box(self, kind: str, index: int, ids: Any, blk: Block) -> I64:
        """The highest block index per axis up to which predicate ``kind``/``index`` holds
        block (0,0,0)'s value on every thread of ``ids``: blocks with every index at or
        below it take the first block's outcome (``self.top``: every block does)."""
        reach = self._preach(Reg(kind, index), blk, ids)
        out: I64 = reach.min(axis=1) if reach.shape[1] else self.top.copy()
        return out

    # --- one step ----------------------------------------------------------------------

    def before(self, m: int, blk: Block, ix: Idx) -> tuple[Any, ...]:
        """What instruction ``m`` will write for the threads ``ix``, from the state before
        it runs: ([(register kind, index, form)], [(predicate kind, index, constant)])."""
        ins = self.instructions[m]
        ids = blk.ids(ix)
        regs: list[tuple[str, int, Form]] = []
        preds: list[tuple[str, int, I64]] = []
        op = _opcode(ins)
        ops = ins.operands
        mods = set(ins.mods)
        if op == "S2R" and len(ops) == 2 and isinstance(ops[1], Special):
            axis = _AXES.get(ops[1].name)
            if axis is not None:
                f = np.zeros((4, len(ids)), dtype=np.uint64)
                f[axis] = 1
                regs.append((*self._dest(ops[0]), (f, np.ones(len(ids), dtype=bool))))
        elif op in _SUMS and not mods & {"X", "64", "WIDE", "HI", "R"}:
            dest, values, _ = _sources(ops)
            form = self._arith(m, op, values, blk, ix, ids)
            if form is not None:
                regs.append((*self._dest(dest), form))
        elif op == "ISETP" and "EX" not in mods and len(ops) == 5:
            reach = np.minimum(self._compare(m, ins, blk, ix, ids), self._preach(ops[4], blk, ids))
            preds += [(*self._dest(o), reach) for o in ops[:2]]
        elif op == "PLOP3" and len(ops) == 7:
            reach = self._full(len(ids))
            for o in ops[2:5]:
                reach = np.minimum(reach, self._preach(o, blk, ids))
            preds += [(*self._dest(o), reach) for o in ops[:2]]
        return (m, ids, regs, preds)

    def after(self, pending: tuple[Any, ...], blk: Block) -> None:
        """The step ran: its destinations take their new forms (unknown but for what
        :meth:`before` computed, and a form only where its value is the register's)."""
        m, ids, regs, preds = pending
        for kind, index, count in self.destinations[m]:
            for k in range(count):
                held = self.forms.get((kind, index + k))
                if held is not None:
                    held[1][ids] = False
                if (kind, index + k) in self.reach:
                    self.reach[(kind, index + k)][:, ids] = 0
        if self.instructions[m].opcode in ("R2P", "UR2P"):  # writes predicates directly
            file = "UP" if self.instructions[m].opcode == "UR2P" else "P"
            for (kind, _), reach in self.reach.items():
                if kind == file:
                    reach[:, ids] = 0
        for kind, index, (f, ok) in regs:
            if index < 0:
                continue
            actual = (blk.r if kind == "R" else blk.ur)[index][ids].astype(np.uint64)
            form, known = self._held(kind, index, blk.threads)
            form[:, ids] = f
            known[ids] = ok & (f[0] == actual)
        for kind, index, reach in preds:
            if index < 0:
                continue
            key = (kind, index)
            if key not in self.reach:
                self.reach[key] = np.zeros((3, blk.threads), dtype=np.int64)
            self.reach[key][:, ids] = reach

    # --- forms -------------------------------------------------------------------------

    @staticmethod
    def _dest(op: Operand) -> tuple[str, int]:
        """(kind, index) a destination names; index -1 where nothing is kept (RZ, PT)."""
        if not isinstance(op, Reg) or op.is_zero or op.is_true:
            return ("", -1)
        return (op.kind, op.index)

    def _held(self, kind: str, index: int, threads: int) -> Form:
        key = (kind, index)
        if key not in self.forms:
            self.forms[key] = (
                np.zeros((4, threads), dtype=np.uint64),
                np.zeros(threads, dtype=bool),
            )
        return self.forms[key]

    def _form(self, m: int, k: int, op: Operand, blk: Block, ix: Idx, ids: Any) -> Form:
        """The form of source operand ``k`` of instruction ``m`` on the threads ``ix``."""
        key = (m, k)
        if key not in self._readers:
            self._readers[key] = read_u32(op, "i", self.instructions[m])
        v, t = self._readers[key](blk, ix)
        n = len(ids)
        f = np.zeros((4, n), dtype=np.uint64)
        f[0] = np.broadcast_to(np.asarray(v, dtype=np.uint32), (n,))
        taint = np.broadcast_to(np.asarray(t, dtype=np.uint8), (n,))
        ok = taint == 0
        blocky = taint == TAINT_BLOCK
        if not blocky.any() or not isinstance(op, Reg) or op.abs or op.sel:
            return f, ok
        held = self.forms.get((op.kind, op.index))
        if held is None:
            return f, ok
        use = blocky & held[1][ids]
        g = held[0][:, ids[use]]
        if op.neg:
            g = (np.uint64(0) - g) & _M
        if op.inv:  # ~x = -x - 1
            g = (np.uint64(0) - g) & _M
            g[0] = (g[0] - np.uint64(1)) & _M
        f[:, use] = g
        return f, ok | use

    def _arith(
        self, m: int, op: str, values: list[Operand], blk: Block, ix: Idx, ids: Any
    ) -> Form | None:
        """The form of a MOV, IADD3, VIADD, IMAD, LEA or SHF.L result, or None (not a sum)."""
        shift = None
        if op == "SHF":  # SHF.L: the low word of (hi:a) << s is a << s, whatever hi
            mods = self.instructions[m].mods
            s = values[1] if len(values) == 3 else None
            if "L" not in mods or not isinstance(s, Imm) or s.int_value is None:
                return None
            limit = 64 if set(mods) & {"U64", "S64"} else 32
            amount = s.int_value & (limit - 1) if "W" in mods else min(s.int_value, limit)
            a, known = self._form(m, 0, values[0], blk, ix, ids)
            factor = (1 << amount) & 0xFFFFFFFF if amount < 64 else 0
            return (a * np.uint64(factor)) & _M, known
        if op == "LEA":
            last = values[-1] if values else None
            if not isinstance(last, Imm) or last.int_value is None or len(values) != 3:
                return None
            shift, values = last.int_value & 63, values[:-1]
        arity = {"MOV": (1, 2), "IADD3": (3,), "VIADD": (2,), "IMAD": (3,), "LEA": (2,)}[op]
        if len(values) not in arity:
            return None
        if op == "MOV":
            values = values[:1]
        forms = [self._form(m, k, o, blk, ix, ids) for k, o in enumerate(values)]
        ok = np.logical_and.reduce([known for _, known in forms])
        if op == "IMAD":  # a * b + c, one factor free of the block index
            (a, _), (b, _), (c, _) = forms
            a_free = ~(a[1:] != 0).any(axis=0)
            b_free = ~(b[1:] != 0).any(axis=0)
            product = np.where(b_free, a * b[0], b * a[0]) & _M
            return (product + c) & _M, ok & (a_free | b_free)
        if shift is not None:  # LEA: (a << shift) + b
            (a, _), (b, _) = forms
            return ((a * np.uint64((1 << shift) & 0xFFFFFFFF)) + b) & _M, ok
        total = np.zeros_like(forms[0][0])
        for f, _ in forms:
            total = (total + f) & _M
        return total, ok

    # --- predicates --------------------------------------------------------------------

    def _full(self, n: int) -> I64:
        """Every block of the grid, for ``n`` threads."""
        return np.repeat(self.top[:, None], n, axis=1)

    def _preach(self, op: Operand, blk: Block, ids: Any) -> I64:
        """Per axis and thread of ``ids``: up to which block index predicate operand ``op``
        holds block (0,0,0)'s value (0: only there)."""
        n = len(ids)
        if not isinstance(op, Reg) or op.kind not in ("P", "UP"):
            return np.zeros((3, n), dtype=np.int64)
        if op.index == PT:
            return self._full(n)
        taint = (blk.tp if op.kind == "P" else blk.tup)[op.index][ids]
        held = self.reach.get((op.kind, op.index))
        out = np.zeros((3, n), dtype=np.int64)
        if held is not None:
            out = np.where(taint == TAINT_BLOCK, held[:, ids], 0)
        return np.where(taint == 0, self.top[:, None], out)

    def _window(self, f: U64, signed: bool) -> tuple[I64, I64, B8]:
        """An operand as an exact sum over the grid: (k, (kx, ky, kz)) as the compare reads
        it, and where it stays in one 32-bit window over the whole grid."""
        c = f[1:].astype(np.int64)
        c = np.where(c >= 1 << 31, c - _WRAP, c)  # the smallest coefficients
        ok = (np.abs(c).astype(np.float64) * self.top[:, None]).sum(axis=0) < _SPREAD
        c = np.where(ok, c, 0)
        terms = c * self.top[:, None]
        k = f[0].astype(np.int64)
        lo = k + np.minimum(terms, 0).sum(axis=0)
        hi = k + np.maximum(terms, 0).sum(axis=0)
        floor = -(1 << 31) if signed else 0
        wraps = np.floor_divide(lo - floor, _WRAP)  # whole windows below the compare's
        return k - wraps * _WRAP, c, ok & (hi - wraps * _WRAP < floor + _WRAP)

    def _compare(self, m: int, ins: Instruction, blk: Block, ix: Idx, ids: Any) -> I64:
        """Per axis and thread: up to which block index ISETP ``m`` compares as in block
        (0,0,0) (the whole grid where it does everywhere)."""
        n = len(ids)
        cmp = next((x for x in ins.mods if x in _COMPARES), None)
        if cmp is None:
            return np.zeros((3, n), dtype=np.int64)
        if cmp in ("T", "F"):
            return self._full(n)
        signed = "U32" not in ins.mods
        (a, ok_a), (b, ok_b) = (self._form(m, k, ins.operands[k], blk, ix, ids) for k in (2, 3))
        ka, ca, fit_a = self._window(a, signed)
        kb, cb, fit_b = self._window(b, signed)
        ok = ok_a & ok_b & fit_a & fit_b
        k, c = ka - kb, ca - cb  # the difference a - b = k + c . blockIdx, exact where ok
        terms = c * self.top[:, None]
        lo = k + np.minimum(terms, 0).sum(axis=0)
        hi = k + np.maximum(terms, 0).sum(axis=0)
        everywhere = (
            ok
            & {
                "LT": (hi < 0) | (lo >= 0),
                "GE": (hi < 0) | (lo >= 0),
                "LE": (hi <= 0) | (lo > 0),
                "GT": (hi <= 0) | (lo > 0),
                "EQ": ((lo == 0) & (hi == 0)) | (lo > 0) | (hi < 0),
                "NE": ((lo == 0) & (hi == 0)) | (lo > 0) | (hi < 0),
            }[cmp]
        )
        # elsewhere: the axes the compare reads stop at 0, but where the difference grows
        # along one axis alone, up to the last index before its sign (or zero) changes
        # (an operand of unknown form may read any axis: every one stops at 0)
        known = np.where(ok_a & ok_b, (a[1:] != 0) | (b[1:] != 0), True)
        reads = np.where(ok, c != 0, known)
        reach = np.where(everywhere | ~reads, self.top[:, None], 0)
        one = ok & ~everywhere & (reads.sum(axis=0) == 1)
        if one.any():
            axis = np.argmax(reads[:, one], axis=0)
            step = c[axis, np.flatnonzero(one)]
            reach[axis, np.flatnonzero(one)] = np.minimum(
                _last_alike(cmp, k[one], step), self.top[axis]
            )
        out: I64 = reach
        return out


def _last_alike(cmp: str, k: I64, c: I64) -> I64:
    """The largest x >= 0 such that every 0..x gives ``k + c*x`` the compare's outcome at 0
    (c != 0; past any grid where it never changes)."""
    never = np.int64(1 << 40)
    if cmp in ("LT", "GE"):  # the outcome is whether k + c*x < 0
        below = np.where(c > 0, (-k - 1) // np.maximum(c, 1), never)
        above = np.where(c < 0, k // np.maximum(-c, 1), never)
        return np.where(k < 0, below, above)
    if cmp in ("LE", "GT"):  # whether k + c*x <= 0
        below = np.where(c > 0, (-k) // np.maximum(c, 1), never)
        above = np.where(c < 0, (k - 1) // np.maximum(-c, 1), never)
        return np.where(k <= 0, below, above)
    # EQ, NE: whether k + c*x == 0; it becomes so at most at x = -k / c
    apart = np.where(np.sign(k) == np.sign(c), never, (np.abs(k) - 1) // np.abs(c))
    return np.where(k == 0, 0, apart)
