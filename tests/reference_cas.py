"""A plain-Python reference of the compare-and-swap loops nvcc emits for shared ``float``,
``double``, ``__half2`` and 64-bit atomics (``LDS``, the new value, ``ATOMS.CAST.SPIN``, back
while the swap failed), one lane at a time, for cross-checking the emulator and the H200.

Written from docs/hardware-model.md section 5a, without the emulator:

* the warps with lanes left run the loop in step, round after round: each reads its lanes'
  words (one ``LDS`` execution per warp); a lane whose update needs no swap (``atomicMin``
  above the word, ...) leaves there;
* the warps' swaps are served one warp after the other, the first rotating from one round to
  the next (round robin, warp 0 first unless ``first`` names another: which warp the H200
  serves first in a loop's first round is not known in general);
* a warp's swap is cut into phases (the warp for 4-byte words, half-warps for 8-byte ones),
  served in order; in a phase the first lane, in lane order, whose word is the first its bank
  holds in the phase and whose read value still equals the word swaps; the other lanes on
  that word fail. A later phase compares with the word as the earlier ones left it.

The wavefronts of each swap are :func:`reference.request_cost`'s for ``cas_spin``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .reference import BANK_BYTES, BANKS, WARP, request_cost

#: (thread, value read) -> the value to write, or None: the lane leaves without a swap
Update = Callable[[int, int], "int | None"]


@dataclass(frozen=True)
class LoopCounts:
    """Executions of the loop's instructions, summed over warps."""

    reads: int  # LDS
    swaps: int  # ATOMS.CAST.SPIN
    swap_wavefronts: int


def cas_loop(
    words: Sequence[int | None],
    update: Update,
    width: int,
    memory: dict[int, int],
    first: int = 0,
    by_warp: dict[int, list[int]] | None = None,
) -> LoopCounts:
    """Run the loop for every thread with a word (a byte address; None: takes no part) until
    every lane has swapped or left; ``memory`` (byte address -> value) is updated. ``first``:
    the position, among the warps that swap, of the one served first in the first round;
    ``by_warp``, where given, gets each warp's swap executions and lanes: warp -> [n, lanes]."""
    pending = {t for t, w in enumerate(words) if w is not None}
    per_phase = WARP if width <= BANK_BYTES else WARP * BANK_BYTES // width
    reads = swaps = wavefronts = 0
    turn = first
    while pending:
        warps = sorted({t // WARP for t in pending})
        seen: dict[int, int] = {}
        new: dict[int, int] = {}
        for w in warps:
            reads += 1
            for t in sorted(x for x in pending if x // WARP == w):
                address = words[t]
                assert address is not None
                seen[t] = memory.get(address, 0)
                value = update(t, seen[t])
                if value is None:
                    pending.discard(t)
                else:
                    new[t] = value
        swapping = sorted({t // WARP for t in new})
        if not swapping:
            continue
        first = turn % len(swapping)
        turn += 1
        for w in swapping[first:] + swapping[:first]:
            lanes = sorted(t for t in new if t // WARP == w)
            addr: list[int | None] = [None] * WARP
            for t in lanes:
                addr[t % WARP] = words[t]
            swaps += 1
            if by_warp is not None:
                tally = by_warp.setdefault(w, [0, 0])
                tally[0] += 1
                tally[1] += len(lanes)
            wavefronts += request_cost(addr, "atomic", width, "cas_spin", 1).wavefronts
            for p in range(0, WARP, per_phase):
                phase = [t for t in lanes if p <= t % WARP < p + per_phase]
                bank_first: dict[int, int] = {}  # bank -> the first word it holds
                swapped: set[int] = set()
                for t in phase:
                    address = words[t]
                    assert address is not None
                    word = address // BANK_BYTES
                    if bank_first.setdefault(word % BANKS, word) != word:
                        continue  # not served this time
                    if address in swapped or memory.get(address, 0) != seen[t]:
                        continue
                    memory[address] = new[t]
                    swapped.add(address)
                    pending.discard(t)
    return LoopCounts(reads, swaps, wavefronts)
