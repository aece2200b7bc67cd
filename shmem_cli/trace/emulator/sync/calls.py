"""The call paths of a block's threads: each a frame, (the frame it was called from, the
call's instruction index), so that the scheduler can rank a called thread as still at its
call sites (:meth:`..state.Block.next_threads`).

A hostile kernel may call without end (a function that calls itself and never returns, with
no stack to run out of): a path is at most :data:`MAX_CALL_DEPTH` calls deep, and the sites
kept for the scheduler's ranking are dropped past :data:`MAX_KEPT_SITES` (a path's sites cost
its depth: keeping every path of a deep recursion grew as its square, 2 GiB in 64,000
instructions).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ....cuda.sass import Instruction

from ..trace_error import TraceError

#: the bytes of local memory the trace gives each thread (its stack)
LOCAL_BYTES = 16 * 1024
#: calls a thread may nest: each keeps its return address (8 bytes) on that stack or in a
#: register pair, so no path twice as deep returns
MAX_CALL_DEPTH = LOCAL_BYTES // 4
#: call sites kept for the frames asked about, in all
MAX_KEPT_SITES = 1 << 20


def below_stack(in_call: bool) -> str:
    """Why a thread's local access fell below its stack: a frame of the kernel itself (no
    call made: its local arrays) too large for it, or calls (``in_call``) nested too deep."""
    if not in_call:
        return (
            "the kernel's stack frame (local arrays, spills) is larger than the "
            f"{LOCAL_BYTES:,} bytes the trace gives a thread: make its local arrays smaller"
        )
    return (
        f"the calls nest deeper than the {LOCAL_BYTES:,} bytes of local memory the trace "
        "gives a thread (a recursion that does not end, or frames too large?)"
    )


class CallPaths:
    """Frame 0 is no call; a frame's id stays its own while the block runs."""

    def __init__(self) -> None:
        self.frames: list[tuple[int, int]] = [(0, -1)]
        self._ids: dict[tuple[int, int], int] = {}
        self._depth = [0]
        self._sites: dict[int, tuple[int, ...]] = {0: ()}
        self._kept = 0

    def enter(self, frame: int, site: int, ins: Instruction | None) -> int:
        """The frame of a call from ``frame`` at the instruction ``site`` (``ins``)."""
        key = (frame, site)
        new = self._ids.setdefault(key, len(self.frames))
        if new == len(self.frames):
            if self._depth[frame] >= MAX_CALL_DEPTH:
                raise TraceError(
                    f"calls nest deeper than {MAX_CALL_DEPTH:,} (each return address takes 8 "
                    f"of the {LOCAL_BYTES:,} bytes of a thread's stack): a recursion that "
                    "never returns",
                    ins,
                )
            self.frames.append(key)
            self._depth.append(self._depth[frame] + 1)
        return new

    def caller(self, frame: int) -> int:
        """The frame ``frame`` returns to."""
        return self.frames[frame][0]

    def sites(self, frame: int) -> tuple[int, ...]:
        """A frame's call sites, outermost first (kept for the frame asked about, built on
        its nearest kept caller's: a step of a deep recursion costs its depth, not more)."""
        if self._kept > MAX_KEPT_SITES:
            self._sites, self._kept = {0: ()}, 0
        chain, at = [], frame
        while at not in self._sites:
            chain.append(self.frames[at][1])
            at = self.frames[at][0]
        sites = self._sites[frame] = (*self._sites[at], *reversed(chain))
        self._kept += len(sites)
        return sites
