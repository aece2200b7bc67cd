"""What the representative block's registers hold in every other block of the grid, as far as
the block index decides it.

While a grid's representative block runs watched (:class:`..grid.Watch`), :class:`Forms` keeps
beside each register that depends on the block index its *form*: per thread, a constant ``k``
and a *block vector* ``V`` (one 32-bit value per candidate block: :mod:`.vectors`), with the
register's value in candidate block ``b`` equal to ``k + V[b]`` (mod 2^32), for every block
that took the representative's decisions so far (the watch drops the others). A form is made
where the register's writer is

* ``S2R``/``S2UR`` of ``SR_CTAID.X/Y/Z``: ``k = 0``, ``V`` the blocks' index on that axis;
* an instruction of :data:`EVALUATED` (adds, multiplies, LEA, shifts, LOP3, IMAD.HI,
  min/max, SEL, ISETP, PLOP3, ...: the divisions and remainders by a constant nvcc emits are
  made of them; I2F, MUFU.RCP, F2I for a runtime divisor; FMUL: CUTLASS's, in float) whose
  sources are free of taint or have forms. The threads are grouped by their sources
  (:func:`.evaluated.additive` sources of the sums only by their vectors: a constant passes
  through a sum unchanged), at most :data:`GROUPS` groups; for each group the instruction
  runs once for every candidate block, through the emulator's own step on a *shadow* block
  whose threads are the candidate blocks (:mod:`.shadow`), with one thread's sources; its
  result is the group's vector, and ``k`` what makes the representative's value (checked: a
  thread's value must be what the register holds, else no form). Where the groups' vectors
  would be large they are kept as the step and evaluated a window of blocks at a time
  (:class:`.vectors.Vectors`);
* ``LDL`` of words an ``STL`` of such registers spilled, reading the values stored there.

Predicates keep, per thread, the blocks in which they hold the representative's value (an
*agreement*, a boolean vector: from the shadow's values of the predicate in each block, made where
a decision reads it (:data:`DERIVED`), else :mod:`.agree` proves it for a compare) and, where the
shadow gave it, their value in each block. A guard on a predicate that carries the block index's
taint keeps the blocks of its agreement (:meth:`agreement`). Anything else (another writer, global
data, an inexact value, more than :data:`GROUPS` groups, vectors past
:data:`.vectors.VECTOR_BYTES`) leaves no form: a decision that reads it is not proven.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

import numpy as np

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Operand, Reg, Special
from ..access_kind import access_width, local_word
from ..operands import Dest
from ..ops.warp.collective import waterfall
from ..state import PT, TAINT_BLOCK, Block, Idx, Launch
from ..taint_flow import taint_destinations
from . import agree, evaluated, vectors, votes
from .distinct import Spread, agreeing
from .evaluated import EVALUATED, base_opcode
from .shadow import Shadow
from .vectors import Unknown, Vectors

if TYPE_CHECKING:
    import numpy.typing as npt

U32: TypeAlias = "npt.NDArray[np.uint32]"
I32: TypeAlias = "npt.NDArray[np.int32]"
B8: TypeAlias = "npt.NDArray[np.bool_]"

#: at most this many groups of threads with different sources per instruction (a block's
#: most threads: every thread its own group)
GROUPS = 1024
_AXES = {"SR_CTAID.X": 0, "SR_CTAID.Y": 1, "SR_CTAID.Z": 2}


class Source(NamedTuple):
    """What a source operand holds per thread: ``k`` and a vector id (-1: none; its value is
    then ``k``), and whether it depends on the block index at all."""

    k: Any  # uint32 per thread (bool for a predicate's value)
    vids: Any  # int32 per thread
    blocky: bool


@dataclass
class Pending:
    """What a step will write, found before it runs (:meth:`Forms.before`)."""

    ids: Any  # the threads that run it
    # per destination register: per group of threads, its value in each candidate block
    results: dict[tuple[str, int], list[Any]] = field(default_factory=dict)
    # per predicate it writes: the blocks where it keeps the representative's value
    preds: dict[tuple[str, int], Any] = field(default_factory=dict)
    additive: bool = False  # a sum: a thread's constant passes through
    group: Any = None  # each thread's group
    axis: tuple[str, int, int] | None = None  # S2R of the block index: (kind, index, vector)
    lazy: tuple[Any, ...] | None = None  # agree.isetp's arguments, for preds where needed
    # per register of results: (each group's value at the representative, its vector id),
    # read for several CTAs at once (None: read in after)
    reads: dict[tuple[str, int], tuple[Any, Any]] | None = None
    chose: bool = False  # a select under a guard (.guarded): for every thread of ``ids``
    local: int | None = None  # STL/LDL: the first word of its slot (-1: no slot known)


#: a predicate's agreement that is its value vector's with the representative's value (made
#: where a decision reads it: :meth:`.vectors.Vectors.same_as`); -1: none
DERIVED = -2
#: :meth:`Forms.before`'s answer where the CTAs' threads must be evaluated apart
SPLIT = Pending(None)


class Forms:
    """The forms of the representative block's registers and predicates, kept step by step
    (:meth:`before`, then :meth:`after`)."""

    def __init__(
        self,
        launch: Launch,
        instructions: Sequence[Instruction],
        destinations: Sequence[tuple[Dest, ...]],
        rep: int,
        shadow: Shadow,
        vec: Vectors,
    ) -> None:
        gx, gy, _ = launch.grid
        cx, cy, cz = launch.cluster  # clusters stand where blocks are (1 x 1 x 1 without)
        nx, ny = gx // cx, gy // cy
        lin = np.arange(vec.n, dtype=np.int64)  # every cluster of the grid, in launch order
        self.rep = rep  # the representative block's number
        self.instructions, self.destinations = instructions, destinations
        self.vec = vec  # kept from one class's block to the next: the same values, once
        # the block index where each cluster starts, per axis (a CTA's own offset in its
        # cluster is the same in every cluster: part of each thread's constant)
        self.axes = [
            self.vec.intern(a.astype(np.uint32))
            for a in ((lin % nx) * cx, ((lin // nx) % ny) * cy, (lin // (nx * ny)) * cz)
        ]
        # per register: (k, vector id or -1 for none, known) per thread of the block
        self.regs: dict[tuple[str, int], tuple[U32, I32, B8]] = {}
        # per predicate: (agreement id, value id) per thread; -1: unknown
        self.preds: dict[tuple[str, int], tuple[I32, I32]] = {}
        self.stored: dict[int, U32] = {}  # per spill slot's word: the values stored (_local)
        self.shadow = shadow

    def agreement(self, kind: str, index: int, ids: Any, blk: Block) -> B8 | None:
        """The candidate blocks in which predicate ``kind``/``index`` holds the
        representative's value on every thread of ``ids`` (None: not known)."""
        taint = blk.file(kind)[1][index][ids]
        held = self.preds.get((kind, index))
        blocky = taint == TAINT_BLOCK
        if held is None:
            return None if blocky.any() else np.ones(self.vec.n, dtype=bool)
        which = held[0][ids[blocky]]
        if (which == -1).any():
            return None
        derived = which == DERIVED  # the agreement of the value's vector, made now (those
        out = np.ones(self.vec.n, dtype=bool)  # of thresholds met at once: .agree.met)
        if derived.any():
            met, rest = agree.met(self.vec, np.unique(held[1][ids[blocky]][derived]), self.rep)
            made = np.array([self.vec.same_as(v, self.rep) for v in rest], dtype=np.int64)
            if len(made) and min(made) < 0:
                return None
            which, out = np.concatenate([which[~derived], made]), out if met is None else met
        try:
            for mask in self.vec.masks([int(i) for i in np.unique(which)]):
                out &= mask
        except Unknown:
            return None
        return out

    def same(self, kind: str, index: int, ids: Any, blk: Block) -> B8 | None:
        """The candidate blocks in which register ``kind``/``index`` holds the
        representative's value on every thread of ``ids`` (None: not known)."""
        if kind in ("P", "UP"):
            return self.agreement(kind, index, ids, blk)
        taint = blk.file(kind)[1][index][ids] if index < 255 else None
        out = np.ones(self.vec.n, dtype=bool)
        if taint is None or not taint.any():
            return out
        held = self.regs.get((kind, index))
        blocky = taint == TAINT_BLOCK
        if held is None or not held[2][ids[blocky]].all():
            return None
        vids = [int(i) for i in np.unique(held[1][ids[blocky]]) if i >= 0]
        spread = [i for i in vids if isinstance(self.vec.values[i], Spread)]
        if spread:  # (at their distinct blocks)
            out &= agreeing(
                [(self.vec.values[i], self.vec.at(i, self.rep)) for i in spread], len(out)
            )
        vids = [i for i in vids if i not in spread]
        try:
            at = {i: self.vec.at(i, self.rep) for i in vids}
            for lo, hi, got in self.vec.windows(vids) if vids else ():
                for i, v in got.items():
                    out[lo:hi] &= v == at[i]
        except Unknown:
            return None
        return out

    def formless(self, m: int, blk: Block, ids: Any) -> B8:
        """Per thread of ``ids``: a register ``m`` reads has no form (:func:`_formless`), nor
        then does ``m`` for threads among which one is (but ISETP's, PLOP3's agreements)."""
        out = np.zeros(len(ids), dtype=bool)
        for o in evaluated.sources(self.instructions[m]):
            taints = blk.file(o.kind)[1] if isinstance(o, Reg) else ()
            if not isinstance(o, Reg) or o.is_zero or o.is_true or o.index >= len(taints):
                continue
            pred = o.kind in ("P", "UP")
            held: Any = (self.preds if pred else self.regs).get((o.kind, o.index))
            known = False if held is None else held[1][ids] >= 0 if pred else held[2][ids]
            out |= _formless(taints[o.index][ids], known)
        return out

    def before(self, m: int, blk: Block, ix: Idx, whole: bool = False) -> Pending | None:
        """What instruction ``m`` will write for the threads ``ix``, from the state before it
        runs; None where it writes no form. ``whole``: the threads of several CTAs at once
        (:mod:`.together`), :data:`SPLIT` where their groups' vectors would not be whole (or
        too many), and a compare's sources kept for each CTA's agreements."""
        ins = self.instructions[m]
        op = base_opcode(ins)
        ids = blk.ids(ix)
        if op == "S2R":
            src = ins.operands[1] if len(ins.operands) == 2 else None
            axis = _AXES.get(src.name) if isinstance(src, Special) else None
            if axis is None:
                return None
            dest = ins.operands[0]
            if not isinstance(dest, Reg) or dest.is_zero:
                return None
            return Pending(ids, axis=(dest.kind, dest.index, self.axes[axis]))
        if op in ("STL", "LDL"):  # a spill and its refill carry forms (:meth:`_local`)
            return SPLIT if whole else Pending(ids, local=local_word(ins, blk, ids))
        if op in ("VOTE", "VOTEU") and not self.vec.full:  # per warp (.votes)
            got = votes.results(self.vec, ins, self.source, blk, ids)
            return None if got is None else Pending(ids, got[0], group=got[1])
        # R2UR's waterfall form reads other lanes: the shadow, whose lanes are blocks, cannot
        if op not in EVALUATED or self.vec.full or waterfall(ins):
            return None
        sources = evaluated.sources(ins)
        forms = [self.source(o, blk, ids) for o in sources]
        if not any(f is not None and f.blocky for f in forms):
            return None  # no source depends on the block index: the result is a value
        preds: dict[tuple[str, int], Any] = {}
        lazy = None  # a compare's agreements, proven in after only where the shadow's fail
        if op == "ISETP" and (whole or not self.stepped(forms)):  # else the shadow's decide
            if agree.reads_own(ins):  # its predicate input is one it writes: before it runs
                preds = agree.isetp(self, ins, forms, ids, blk)
            else:
                lazy = (ins, forms, ids, blk)
        elif op == "PLOP3" and len(ins.operands) == 7:
            agreed = [self._pred_agree(o, blk, ids) for o in ins.operands[2:5]]
            meet: Any = np.ones(self.vec.n, dtype=bool)
            for a in agreed:  # the inputs' agreements meet (None: one is not known)
                meet = None if a is None or meet is None else meet & a
            for o in ins.operands[:2]:
                if isinstance(o, Reg) and not o.is_true:
                    preds[(o.kind, o.index)] = meet
        results: dict[tuple[str, int], list[Any]] = {}
        group = np.zeros(len(ids), dtype=np.int64)
        additive: set[int] = set()
        if all(f is not None for f in forms):
            known = [f for f in forms if f is not None]
            additive = evaluated.additive(ins, sources, [f.blocky for f in known])
            key_rows = []
            for p, (k, vid, _) in enumerate(known):
                key_rows.append(vid.astype(np.int64))
                if p not in additive:
                    key_rows.append(k.astype(np.int64))
            keys, index, inverse = agree.unique_columns(np.stack(key_rows))
            if whole and (keys.shape[1] > GROUPS or keys.shape[1] * self.vec.n > vectors.EAGER):
                return SPLIT
            if keys.shape[1] <= GROUPS:
                group, firsts = inverse.reshape(-1), index.tolist()
                pairs = [self.pair(o, blk, ids) for o in sources]
                got = agree.arcs(self, ins, known, ids, blk, firsts) if op == "ISETP" else None
                results = got or self.shadow.run(m, sources, known, pairs, firsts, self.vec)
        elif whole:
            return SPLIT
        if not results and not preds and lazy is None:
            return None
        return Pending(ids, results, preds, bool(additive), group, lazy=lazy)

    def pair(self, o: Operand, blk: Block, ids: Any) -> Source | None:
        """The form of the register after ``o`` (the second of a pair), or None."""
        if not isinstance(o, Reg) or o.kind not in ("R", "UR") or o.is_zero:
            return None
        top = len(blk.r) if o.kind == "R" else 63
        if o.index + 1 >= top:
            return None
        return self.source(Reg(o.kind, o.index + 1), blk, ids)

    def after(self, pending: Pending | None, m: int, blk: Block, ix: Idx) -> None:
        """The step ran: its destinations take the forms :meth:`before` found (none where it
        found none, or where a thread's value is not the form's)."""
        ids = blk.ids(ix) if pending is None or not pending.chose else pending.ids
        if pending is not None and pending.chose:  # every thread at it: the values may differ
            mark = np.full(len(ids), TAINT_BLOCK, np.uint8)  # whichever way the guard went
            taint_destinations(blk, self.destinations[m], ids, mark)
        for kind, index, count in self.destinations[m]:
            for k in range(count):
                held = self.regs.get((kind, index + k))
                if held is not None:
                    held[2][ids] = False
                got = self.preds.get((kind, index + k))
                if got is not None:
                    got[0][ids] = -1
                    got[1][ids] = -1
        if (ins := self.instructions[m]).opcode in ("R2P", "UR2P"):  # its mask's predicates
            mask = getattr(ins.operands[-1], "int_value", None) or 0x7F
            for (kind, k), got in self.preds.items():
                if kind == ("UP" if ins.opcode == "UR2P" else "P") and mask >> k & 1:
                    got[0][ids], got[1][ids] = -1, -1
        if self.instructions[m].opcode in ("ST", "ATOM", "RED"):  # may write a spill slot
            self._local(None, -1, blk, ids)
        if pending is None:
            return
        if pending.local is not None:
            self._local(self.instructions[m], pending.local, blk, ids)
            return
        if pending.axis is not None:  # S2R of the block index
            kind, index, vector = pending.axis
            actual = blk.file(kind)[0][index][ids].astype(np.uint64)
            start = np.uint64(self.vec.at(vector, self.rep))
            k = ((actual - start) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            self._set(kind, index, ids, blk, np.full(len(ids), vector, np.int32), k)
            return
        results, preds, additive, group = (
            pending.results, pending.preds, pending.additive, pending.group
        )  # fmt: skip
        for (kind, index), per_group in results.items():
            if kind in ("P", "UP") and additive:
                continue
            read = None if pending.reads is None else pending.reads.get((kind, index))
            at_rep, vids = self.vec.at_each(per_group, self.rep) if read is None else read
            actual = blk.file(kind)[0][index][ids].astype(np.uint64)
            if kind in ("P", "UP"):  # the agreement made where a decision reads it (made
                # here, 7 million of a 64 x 32 causal grid's were never read)
                ok = (vids[group] >= 0) & (at_rep[group] == actual)
                value = np.where(ok, vids[group], -1)
                self._set_pred(kind, index, ids, blk, np.where(ok, DERIVED, -1), value)
                continue
            k = ((actual - at_rep[group]) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            vid = vids[group].astype(np.int32)
            if not additive:  # every thread of a group holds the group's value
                vid = np.where(k == 0, vid, -1).astype(np.int32)
            self._set(kind, index, ids, blk, vid, k)
        if pending.lazy is not None and self._unagreed(pending.lazy[0], ids):
            preds = agree.isetp(self, *pending.lazy)
        for (kind, index), agreement in preds.items():
            got = self.preds.get((kind, index))
            none = np.full(len(ids), -1, np.int32)
            vals = got[1][ids] if got is not None else none
            was = got[0][ids] if got is not None else none
            a = self.vec.intern(agreement) if agreement is not None else -1
            if a < 0:
                continue
            self._set_pred(kind, index, ids, blk, np.where(was != -1, was, a), vals)

    def _set(self, kind: str, index: int, ids: Any, blk: Block, vid: Any, k: Any) -> None:
        key = (kind, index)
        if key not in self.regs:
            t = blk.threads
            self.regs[key] = (np.zeros(t, np.uint32), np.full(t, -1, np.int32), np.zeros(t, bool))
        ks, vids, known = self.regs[key]
        ks[ids], vids[ids] = k, vid
        taint = 0 if kind == "L" else blk.file(kind)[1][index][ids]  # ("L": a spill slot)
        known[ids] = (vid >= 0) & ((taint & ~np.uint8(TAINT_BLOCK)) == 0)

    def _local(self, ins: Instruction | None, word: int, blk: Block, ids: Any) -> None:
        """A spill (``STL``) keeps its registers' forms as ``("L", word)`` and their values; a
        refill (``LDL``) takes them back where it reads those values. A spill to a word not
        known, or another store to local memory (``ins`` None), forgets every slot."""
        spill = ins is None or ins.opcode == "STL"
        if ins is None or word < 0:
            for key, kept in self.regs.items():
                if key[0] == "L" and spill:
                    kept[2][ids] = False
            return
        reg = ins.operands[1 if spill else 0]
        assert isinstance(reg, Reg)
        for w in range(max(1, access_width(ins)[0] // 4)):
            at, slot, zero = ("R", reg.index + w), ("L", word + w), np.zeros(len(ids), np.uint32)
            value = zero if reg.is_zero else blk.file("R")[0][reg.index + w][ids]
            held = self.regs.get(at if spill else slot)
            if spill:
                k, vid = (zero, -1) if held is None else (held[0][ids], held[1][ids])
                self._set(*slot, ids, blk, np.where(held is not None and held[2][ids], vid, -1), k)
                self.stored.setdefault(word + w, np.zeros(blk.threads, np.uint32))[ids] = value
            elif held is not None:
                ok = held[2][ids] & (self.stored[word + w][ids] == value)
                self._set(*at, ids, blk, np.where(ok, held[1][ids], -1), held[0][ids])

    def _set_pred(
        self, kind: str, index: int, ids: Any, blk: Block, agreement: Any, value: Any
    ) -> None:
        key = (kind, index)
        if key not in self.preds:
            n = blk.threads
            self.preds[key] = (np.full(n, -1, np.int32), np.full(n, -1, np.int32))
        a, v = self.preds[key]
        a[ids], v[ids] = agreement, value

    def _unagreed(self, ins: Instruction, ids: Any) -> bool:
        """Whether a predicate compare ``ins`` writes has no agreement on a thread of ``ids``
        (the shadow's values gave none there): :func:`.agree.isetp` is asked then."""
        for o in agree.dests(ins):
            got = self.preds.get((o.kind, o.index))
            if got is None or bool((got[0][ids] == -1).any()):
                return True
        return False

    def stepped(self, forms: Sequence[Source | None]) -> bool:
        """A source's vector is kept as the step that makes it (evaluated by window)."""
        return any(f is not None and self.vec.any_step(f.vids) for f in forms)

    def _pred_agree(self, o: Operand, blk: Block, ids: Any) -> B8 | None:
        if not isinstance(o, Reg) or o.kind not in ("P", "UP"):
            return None
        if o.index == PT:
            return np.ones(self.vec.n, dtype=bool)
        return self.agreement(o.kind, o.index, ids, blk)

    def source(self, o: Operand, blk: Block, ids: Any) -> Source | None:
        """The :class:`Source` of an operand for the threads ``ids`` (a thread free of
        taint: its value, no vector; an immediate or a constant: no register); None where a
        thread carries other taint or has no form."""
        n = len(ids)
        none = np.full(n, -1, np.int32)
        if not isinstance(o, Reg) or o.is_zero or o.is_true:
            return Source(np.zeros(n, np.uint32), none, False)
        pred = o.kind in ("P", "UP")
        values, taints = blk.file(o.kind)
        taint = taints[o.index][ids]
        value = values[o.index][ids].astype(np.uint32) if pred else values[o.index][ids]
        if not np.count_nonzero(taint):  # (cheaper than np.all on a warp)
            return Source(value, none, False)
        clean = taint == 0
        if pred:
            got = self.preds.get((o.kind, o.index))
            if got is None:
                return None
            k, vid = np.zeros(n, np.uint32), got[1][ids]
            known = vid >= 0
        else:
            held = self.regs.get((o.kind, o.index))
            if held is None:
                return None
            k, vid, known = held[0][ids], held[1][ids], held[2][ids]
        if np.count_nonzero(_formless(taint, known)):
            return None
        return Source(np.where(clean, value, k), np.where(clean, -1, vid), True)


def _formless(taint: Any, known: Any) -> Any:
    """Where a source has no form: taint, and not the block index's alone with a form known."""
    return (taint != 0) & ~((taint == TAINT_BLOCK) & known)
