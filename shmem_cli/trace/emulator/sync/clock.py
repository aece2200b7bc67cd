"""The clocks a kernel reads (``SR_CLOCKLO``/``HI``: the SM's cycle counter, ``clock()`` and
``clock64()``; ``SR_GLOBALTIMERLO``/``HI``: ``%globaltimer``, nanoseconds), and delay loops
fast-forwarded.

The model:

* Each CTA of a batch has its own SM clock, 64 bits, 0 when the block starts. It advances
  :data:`CYCLES_PER_WARP_INSTRUCTION` cycles per warp instruction the CTA issued (its
  thread-instructions, the scheduler's count, over the warp size): an SM's four schedulers
  issue up to four warp instructions a cycle, a lone warp's dependent instructions about one
  in four cycles, and 2 lies between. Blocks share no clock: a grid's blocks, traced in
  batches, would otherwise read values that depend on the batching.
* Every read is at least one cycle past the CTA's previous read, so the values a CTA reads
  strictly increase (the lanes and warps that read in one step read one value). A 64-bit
  read (``CS2R Rd, SR_CLOCKLO``) gives both words of one value; a 32-bit read the word
  it names, of the value at that read.
* The global timer is the same count in nanoseconds at 2 GHz (the H200's SMs boost to
  1.98 GHz): ``cycles // 2``, never decreasing.

Fast-forward. A warp that reads the clock at an instruction it read it at before, having run
no instruction that another thread or the report could see since (:func:`observable`: shared,
global and generic memory, atomics, barriers, mbarriers, fences, TMA, wgmma; not a thread's
own local memory, which a ``-G`` build's ``clock()`` call uses), is waiting on
the clock: nothing it did in between can matter but the time. Its CTA's clock jumps ahead
before the read: :data:`FIRST_JUMP` cycles, then twice the warp's previous jump at that
instruction, so a wait of N cycles ends after about log2(N / FIRST_JUMP) + 2 iterations; the
jumps start again from the first once the warp does observable work. A jump is a stall of
the warp, a legal schedule: every value read from a clock is marked inexact (taint) anyway.

The jump is the whole CTA's, so it is made only where no other warp of the CTA can work
(issue 30): one warp's wait must not use up another's time (``while (clock64() - t0 <
budget) { work(); ++n; }`` in one warp while another sleeps). Where a thread outside the
warps waiting on the clock can run (:meth:`Host.busy`), a jump longer than
:data:`CTA_STALL` is not made: the warp *yields* (:meth:`Host.yielded`, parked by
:mod:`.clock_wait`) till the CTA's clock, moved on by the others' work, passes what the jump
would have reached (:attr:`Clock.until`), or till no thread of the CTA can run; its first
read then jumps nothing (it reads the time the others made), its next ones go on doubling.
A jump goes no further than the earliest ``until`` of a yielded warp of the CTA, which runs
next. The first two jumps of a wait (1,024 and 2,048 cycles: each at most
:data:`CTA_STALL`, 3,072 in all) stall the whole CTA even so: the model's 2 cycles a warp
instruction is the pace of a busy SM, and a latency-bound loop (a contended
compare-and-swap) runs far slower, so a short wait's cycles are not the others' work. How
short is a parameter of the model, not a measured constant of the GPU: the H200 ran two
warps' ``atomicAdd`` loops in step where one had first waited 0 to 3,000 cycles
(tests/data/trace/casloops and atomloops, ``skew``) and partly apart at 30,000, and no skew
between was measured. Any cut-off from 3,000 to 30,000 cycles fits those launches; two
jumps is the shortest of the doubling series that covers 3,000.
The clock stops jumping at :data:`CAP` cycles (73 years at 2 GHz): a wait longer than that
is endless, and the budget stops it. A 32-bit read's jumps (``S2R``/``S2UR`` of a clock,
``CS2R.32``: a wait measured in 32 bits, ``(unsigned)clock() - t0 < C``) grow no longer
than :data:`CAP_32` (2^28), so that the low words read climb past ``C`` by at most that
before they wrap: any ``C`` up to 2^32 - 2^28 (15/16 of the word's range) ends within about
35 iterations; a wait closer to 2^32 cycles may miss its window and take many more, as the
low word comes round again.

``budget.Repeats`` watches clock kernels too: the reads are counted in the block's state
(:meth:`..state.Block.machine_state_small`), so a state met again proves a spin only when no
clock was read in between, and a loop that reads no clock cannot end by it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

if TYPE_CHECKING:
    from ....cuda.sass import Instruction

#: the special registers that read a clock (the SM's and the global timer)
CLOCKS = frozenset({"SR_CLOCKLO", "SR_CLOCKHI", "SR_GLOBALTIMERLO", "SR_GLOBALTIMERHI"})
CYCLES_PER_WARP_INSTRUCTION = 2
CYCLES_PER_NS = 2  # the global timer's nanoseconds: cycles at 2 GHz
#: the first jump of a spinning warp's clock, in cycles (then doubled at each spin read)
FIRST_JUMP = 1024
#: a jump no longer than this (cycles: a wait's first two, 3,072 together) stalls the whole
#: CTA even while another warp could work; a longer one waits till none can
#: (:mod:`.clock_wait`). A model parameter bracketed by measurement (the module's text)
CTA_STALL = 2 * FIRST_JUMP
#: the clock jumps no further than this (cycles): a wait past it is endless
CAP = 1 << 62
#: a 32-bit read's jumps grow no longer than this (cycles): see the module's docstring
CAP_32 = 1 << 28
_WORD = 0xFFFF_FFFF

#: instructions no other thread and no report can see the effect of: register and
#: predicate arithmetic, conversions, warp exchanges (within the warp), special registers,
#: constant banks, control flow and sleeps, calls (an external one is stepped over; the
#: report names it once), and a thread's own local memory (a ``-G`` build's ``clock()``
#: keeps its return address there). Any other opcode is observable: it ends a spin.
QUIET = frozenset(
    [
        *("IADD3", "UIADD3", "VIADD", "IMAD", "UIMAD", "LEA", "ULEA", "IABS", "IMNMX"),
        *("VIMNMX", "VIMNMX3", "VIADDMNMX", "MOV", "UMOV", "SEL", "USEL", "FSEL", "ISETP"),
        *("UISETP", "PLOP3", "UPLOP3", "LOP3", "ULOP3", "SHF", "USHF", "PRMT", "UPRMT"),
        *("POPC", "UPOPC", "FLO", "UFLO", "BREV", "UBREV", "SGXT", "USGXT", "BMSK", "UBMSK"),
        *("IDP", "VABSDIFF", "VABSDIFF4", "P2R", "R2P", "UP2UR", "R2UR", "FFMA", "FADD"),
        *("FMUL", "FMNMX", "FSETP", "FSET", "FCHK", "FRND", "MUFU", "DADD", "DFMA", "DMUL"),
        *("DSETP", "HFMA2", "HADD2", "HMUL2", "HMNMX2", "HSET2", "HSETP2", "VHMNMX", "I2FP"),
        *("I2F", "F2I", "F2F", "F2FP", "I2I", "I2IP", "HMMA", "IMMA", "DMMA", "SHFL"),
        *("VOTE", "VOTEU", "MATCH", "REDUX", "ELECT", "S2R", "S2UR", "CS2R", "LDC", "ULDC"),
        *("LEPC", "BRA", "BRX", "BSSY", "BSYNC", "BREAK", "BMOV", "WARPSYNC", "ENDCOLLECTIVE"),
        *("YIELD", "NANOSLEEP", "NOP", "CALL", "RET", "LDL", "STL"),
    ]
)


def reads_clock(ins: Instruction) -> bool:
    """Whether ``ins`` reads a clock (``S2R``, ``S2UR``, ``CS2R`` of one)."""
    return ins.opcode in ("S2R", "S2UR", "CS2R") and any(
        getattr(o, "name", None) in CLOCKS for o in ins.operands
    )


def observable(ins: Instruction) -> bool:
    """Whether running ``ins`` ends a warp's spin on the clock (:data:`QUIET`)."""
    return ins.opcode not in QUIET


class Host(Protocol):
    """What the scheduler tells the clock, and is told (:mod:`.clock_wait`)."""

    def busy(self) -> Any:
        """Per CTA: whether a thread can run that is not of a warp waiting on the clock."""

    def yielded(self, warps: Any) -> None:
        """Warps ``warps`` wait on the clock (till :attr:`Clock.until`) while others work."""

    def hurry(self) -> None:
        """A jump reached a parked warp's :attr:`Clock.until`: it should run again soon."""


class Clock:
    """The clocks of a batch's CTAs and its warps' spins on them."""

    def __init__(self, warps: int, ctas: int, warp_size: int) -> None:
        #: thread-instructions each CTA ran: the scheduler's own count, shared with it
        #: (``scheduler.run_block``); zeros where no scheduler runs the block
        self.work: Any = np.zeros(ctas, dtype=np.int64)
        self.warp_size = warp_size
        self.jumped = np.zeros(ctas, dtype=np.int64)  # cycles each CTA's clock jumped
        self.last = np.full(ctas, -1, dtype=np.int64)  # each CTA's last value read
        self.epoch = np.zeros(warps, dtype=np.int64)  # observable steps each warp ran
        self.warps = warps
        # per instruction (pc) that read a clock: each warp's epoch at its last read there
        # (-1: none yet) and the jump that read made (0: none)
        self.seen: dict[int, Any] = {}
        self.jumps: dict[int, Any] = {}
        # per warp: its epoch at its last read where that was a spin (-1: it was none); the
        # warp waits on the clock while this is its epoch
        self.spun = np.full(warps, -1, dtype=np.int64)
        # per warp that yielded (Host.yielded): the value its wait goes on at, and its CTA
        self.until = np.full(warps, -1, dtype=np.int64)
        self.home = np.zeros(warps, dtype=np.int64)
        self.woke = np.zeros(warps, dtype=bool)  # parked till now: its next spin jumps not
        self.host: Host | None = None  # None: no other warp can run (a lone warp's waits)
        self.reads = 0  # steps that read a clock (part of the block's state: Repeats)
        self.spins = 0  # reads that made a jump (the report's note)
        self.high: Any = None  # the high words of the last value read (CS2R's pair)

    def touch(self, warps: Any) -> None:
        """Warps ``warps`` ran an observable instruction: their spins end."""
        self.epoch[warps] += 1

    def waiting(self) -> Any:
        """Per warp: whether it waits on the clock (its last read a spin, nothing since)."""
        return self.spun == self.epoch

    def now(self, ctas: Any) -> Any:
        """The clock of each of ``ctas`` (cycles), as a read would give it (less the +1)."""
        own = self.work[ctas] * CYCLES_PER_WARP_INSTRUCTION // self.warp_size
        return np.maximum(self.last[ctas], own + self.jumped[ctas])

    def read(self, name: str, warps: Any, ctas: Any, ins: Instruction) -> Any:
        """The word ``name`` names of the clock each thread reads (threads of warps
        ``warps`` in CTAs ``ctas``, by ``ins``); its high words are kept in :attr:`high`."""
        self.reads += 1
        pc, cap = ins.pc, CAP if ins.opcode == "CS2R" and "32" not in ins.mods else CAP_32
        uw, first = np.unique(warps, return_index=True)
        wc = ctas[first]
        seen = self.seen.setdefault(pc, np.full(self.warps, -1, dtype=np.int64))
        jump = self.jumps.setdefault(pc, np.zeros(self.warps, dtype=np.int64))
        spin = seen[uw] == self.epoch[uw]
        seen[uw] = self.epoch[uw]
        self.spun[uw] = np.where(spin, self.epoch[uw], -1)
        doubled = 2 * np.minimum(jump[uw], CAP // 2)
        jump[uw] = np.where(spin, np.clip(doubled, FIRST_JUMP, cap), 0)
        yields, fresh = None, self.woke[uw]
        self.woke[uw] = False
        if spin.any():
            sw, sc = uw[spin], wc[spin]
            busy = self.host.busy()[sc] if self.host is not None else np.zeros(len(sw), bool)
            stay = busy & (jump[sw] > CTA_STALL)  # they yield to the busy warps
            go = ~stay & ~fresh[spin]  # (a warp just woken reads the time the others made)
            self._jump(sc[go], jump[sw[go]])
            if stay.any():
                yields = sw[stay], sc[stay]
        uc = np.unique(wc)
        own = self.work[uc] * CYCLES_PER_WARP_INSTRUCTION // self.warp_size
        self.last[uc] = np.maximum(self.last[uc] + 1, own + self.jumped[uc])
        if yields is not None and self.host is not None:
            yw, yc = yields
            self.home[yw] = yc
            self.until[yw] = self.last[yc] + jump[yw]
            self.host.yielded(yw)
        value = self.last[ctas]
        if name.startswith("SR_GLOBALTIMER"):
            value = value // CYCLES_PER_NS
        low = (value & _WORD).astype(np.uint32)
        self.high = (value >> 32).astype(np.uint32)
        return self.high if name.endswith("HI") else low

    def _jump(self, ctas: Any, jumps: Any) -> None:
        """Jump the clocks of ``ctas`` (the CTA of each spinning warp that jumps) by the most
        of their warps' ``jumps``, but no further than the earliest :attr:`until` of a warp
        there that yielded: it goes on first."""
        if not len(ctas):
            return
        add = np.zeros(len(self.jumped), dtype=np.int64)
        np.maximum.at(add, ctas, jumps)
        parked = np.flatnonzero(self.until >= 0)
        if len(parked):
            soonest = np.full(len(self.jumped), CAP, dtype=np.int64)
            np.minimum.at(soonest, self.home[parked], self.until[parked])
            uc = np.unique(ctas)
            room = np.maximum(soonest[uc] - self.now(uc), 0)
            if (add[uc] >= room).any() and self.host is not None:
                self.host.hurry()
            add[uc] = np.minimum(add[uc], room)
        if add.any():
            self.spins += 1
        self.jumped += np.minimum(add, CAP - self.jumped)
