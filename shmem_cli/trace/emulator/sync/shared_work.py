"""Blocks that share their work through global memory: a tile counter (issue 30).

A persistent kernel launches about as many blocks as the GPU holds at once, and each block
loops ``tile = atomicAdd(&counter, 1); if (tile >= ntiles) break; ...``. shmem runs a grid's
first block alone, watched, to prove the others alike (:mod:`..alike`): alone, that block
takes every tile (past its own budget, where the tiles are many), while on the GPU they
spread over the blocks resident together. So blocks that take work from one counter run
together from the start, as the GPU holds them, in launch order (:func:`at_once`: the
profile's SMs times the blocks one SM holds of the kernel, and at most a batch's memory),
and none is run alone to stand for the others.

The criterion (:func:`shares_work`) is static, read from the SASS: an integer ``ATOMG.ADD``
or ``ATOMG.INC`` (a global fetch-and-add: ``atomicAdd``, ``atomicInc``; nvcc writes ``RED``
where the old value is unused) whose destination register another instruction reads: a
ticket. A lock's ``CAS`` or ``EXCH``, or a float's ``CAS`` loop, hands out no work (a block
alone takes the lock and releases it), nor does a float's sum. It is sound: running the blocks
side by side, as the GPU does, is a schedule the GPU may take, and the work they do (every
tile taken once) and so the per-op totals are the same whichever block takes which tile.
Its cost: a kernel whose atomic's old value only places what it writes (a compaction's
output slot) runs every block, where its first block could have stood for the others. A
generic ``ATOM`` is left out: it may address shared memory (a cluster's histogram). Blocks
that wait on a flag or a look-back another block writes need nothing here: a block run
alone that waits is set aside while the others run (:mod:`.waiting_blocks`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ....cuda.sass import Instruction
from ....cuda.sass_operands import Mem, Reg
from ....plumbing.errors import file_line
from ....plumbing.frozen import frozen
from ..operands import Dest

#: the global atomic that returns a value (ATOM may be generic: shared memory; RED returns none)
RETURNING = "ATOMG"
#: its operations that hand out tickets (integer ones: a float's modifiers start F or BF)
TICKETS = frozenset({"ADD", "INC"})


def _ticket(ins: Instruction) -> bool:
    """``ins`` is an integer fetch-and-add or -increment on global memory."""
    mods = set(ins.mods)
    return (
        ins.opcode == RETURNING
        and bool(mods & TICKETS)
        and not any(m.startswith(("F", "BF")) for m in mods)
    )


def _read(ins: Instruction, dests: tuple[Dest, ...]) -> set[int]:
    """The general registers ``ins`` reads: its operands past the leading ones it writes
    (destinations and predicate outputs), and the registers of its addresses."""
    written = {(kind, index) for kind, index, _ in dests}
    ops = list(ins.operands)
    k = 0
    while k < len(ops):
        o = ops[k]
        if not (isinstance(o, Reg) and (o.kind in ("P", "UP") or (o.kind, o.index) in written)):
            break
        k += 1
    read: set[int] = set()
    for o in ops[k:]:
        for r in (o.reg,) if isinstance(o, Mem) else (o,):
            if isinstance(r, Reg) and r.kind == "R" and not r.is_zero:
                read.update(range(r.index, r.index + (2 if "64" in r.sel else 1)))
    return read


def shares_work(
    instructions: Sequence[Instruction], destinations: Sequence[tuple[Dest, ...]]
) -> Instruction | None:
    """The first integer fetch-and-add (-increment) on global memory whose returned value (a
    register of its destination) another instruction reads, else None (the module's text).
    ``destinations``: the registers each instruction writes (``decode.Program``)."""
    returned: dict[int, Instruction] = {}
    for ins, dests in zip(instructions, destinations, strict=True):
        if _ticket(ins):
            for kind, index, count in dests:
                if kind == "R" and index != 255:
                    returned.update({r: ins for r in range(index, index + count)})
    if not returned:
        return None
    for ins, dests in zip(instructions, destinations, strict=True):
        if ins.opcode == RETURNING:
            continue
        hit = sorted(r for r in _read(ins, dests) if r in returned)
        if hit:
            return returned[hit[0]]
    return None


def at_once(resident: int, cluster_ctas: int, per_batch: int) -> int:
    """Clusters (blocks) run together: as many as the GPU holds at once (``resident``
    blocks, 0 when not known), at most ``per_batch`` (a batch's memory), at least one."""
    held = resident // cluster_ctas if resident else per_batch
    return max(1, min(per_batch, held))


@frozen
class SharesWork:
    """Why the blocks ran together from the start: the atomic whose returned value they
    read, the blocks of the grid, those run together at most and those the GPU holds at
    once (0: not known)."""

    instruction: Instruction
    blocks: int
    together: int
    resident: int = 0

    def text(self, sampled: bool = False) -> str:
        """In words (``sampled``: the grid was past the time left, so blocks were sampled)."""
        ins = self.instruction
        where = f"{file_line(ins.file, ins.line)} " if ins.file and ins.line else ""
        sms = "its SMs times the blocks one SM holds of this kernel"
        if self.together >= self.blocks:
            ran = f"all {self.blocks:,} blocks ran together from the start"
        else:
            some = "a sample of the blocks ran" if sampled else "every block ran"
            ran = f"{some} in launch order, {self.together:,} at a time"
        if not self.resident:
            held = ""
        elif self.together < min(self.blocks, self.resident):
            held = f" (the GPU holds {self.resident:,} at once, {sms}; a batch's memory fewer)"
        elif self.together < self.blocks:
            held = f", as many as the GPU holds at once ({sms})"
        else:
            held = f" (the GPU holds {self.resident:,} at once: {sms})"
        return (
            f"blocks take work from one another: {where}(pc 0x{ins.pc:04x}, {ins.name}) returns "
            "a global word's old value that the kernel reads (a tile counter, a work queue), so "
            f"no block was run alone to stand for the others; {ran}, side by side as resident "
            f"blocks{held}, sharing the work as on the GPU (the totals count every piece of "
            "work once, whichever block took it)"
        )
