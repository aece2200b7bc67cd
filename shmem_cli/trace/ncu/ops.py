"""``shmem trace --compare RAW.csv``: the trace's per-op totals beside Nsight Compute's
per-launch counters (the raw page: ``ncu -i REPORT --page raw --csv``).

Each counter of the launch's row that measures what shmem totals is one row: the shared
ops' requests and wavefronts (:data:`shmem_cli.hardware.ops.OPS`' counters; ops that share a
wavefront counter, ``load`` and ``ldmatrix``, are summed), the atomics' wavefronts with the
remote atomics' (``op_atom``), the ``op_misc`` wavefronts (warps' ends, CTA barriers,
GPU-scope fences, empty executions: :mod:`shmem_cli.hardware.misc`), and distributed shared memory's
requests and crossbar sectors. A counter the CSV does not hold is not compared, nor one that
both sides count 0.

The ``op_misc`` row is an estimate, shown but never part of the verdict: the rule counts what
the H200 counts in every kernel of the lab (warp ends, CTA barriers, GPU-scope fences, empty
executions, shuffles, guarded-off global stores), but Nsight adds wavefronts the rule leaves
out (CTA-scope fences, arrivals that return the barrier's state; docs/hardware-model.md
section 9e), so a kernel with those reads above it without the other rows being wrong.
"""

from __future__ import annotations

from typing import Any

from ...hardware.ops import (
    DSHARED_COUNTERS,
    DSHARED_SECTORS_COUNTER,
    MISC_COUNTER,
    OPS,
    get,
)
from ...plumbing.errors import ShmemError, shorten
from ...plumbing.frozen import frozen
from ..result import KernelTrace
from .exports import NcuLaunch
from .names import matcher

ATOM_COUNTER = get("atomic").counters.wavefronts  # the remote atomics count there too


@frozen
class OpCompare:
    """One counter of the launch: what Nsight Compute counted and what shmem totals."""

    what: str  # e.g. "load requests", "misc wavefronts"
    counter: str  # the Nsight Compute counter (without .sum), "+"-joined when summed
    ncu: int
    shmem: int
    estimate: bool = False  # shown beside Nsight's figure, never a disagreement

    @property
    def agrees(self) -> bool:
        """Whether this row lets the comparison agree: equal figures, or an estimate."""
        return self.estimate or self.ncu == self.shmem

    @property
    def verdict(self) -> str:
        if self.ncu == self.shmem:
            return "match"
        return "estimate" if self.estimate else "differs"

    def to_json(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "counter": self.counter,
            "ncu": self.ncu,
            "shmem": self.shmem,
            "verdict": self.verdict,
        }


def pick_launch(
    kernel: KernelTrace, launches: list[NcuLaunch], csv_path: str
) -> tuple[int, int, int]:
    """(index in the raw page of the launch compared, its place among this kernel's rows
    (1-based), rows of this kernel): the first whose grid and block are the trace's, else
    the first (a whole program's export holds a kernel's launches of every shape)."""
    match = matcher((kernel.name, kernel.mangled))
    mine = [k for k, row in enumerate(launches) if match(row.kernel)]
    if not mine:
        names = ", ".join(shorten(n) for n in list(dict.fromkeys(r.kernel for r in launches))[:20])
        raise ShmemError(
            f"the CSV has no launch of {shorten(kernel.name)}; it has: {shorten(names, 400)}",
            path=csv_path,
            code="input",
        )
    shape = (tuple(kernel.launch.grid), tuple(kernel.launch.block))
    same = [n for n, k in enumerate(mine) if (launches[k].grid, launches[k].block) == shape]
    at = same[0] if same else 0
    return mine[at], at + 1, len(mine)


def op_rows(kernel: KernelTrace, counters: dict[str, int]) -> tuple[OpCompare, ...]:
    """The rows of the counters ``counters`` holds (one launch's raw-page row) where either
    side counted something."""
    return tuple(o for o in _all_rows(kernel, counters) if o.ncu or o.shmem)


def _all_rows(kernel: KernelTrace, counters: dict[str, int]) -> tuple[OpCompare, ...]:
    out: list[OpCompare] = []
    wavefronts: dict[str, list[str]] = {}  # wavefront counter -> the ops it counts
    for op in OPS:
        t = kernel.totals[op.name]
        req = op.counters.requests
        if req in counters:
            out.append(OpCompare(f"{op.name} requests", req, counters[req], t.requests))
        if op.counters.wavefronts is not None:
            wavefronts.setdefault(op.counters.wavefronts, []).append(op.name)
    for counter, names in wavefronts.items():
        if counter not in counters:
            continue
        shmem = sum(kernel.totals[n].wavefronts for n in names)
        label = " + ".join(names)
        if counter == ATOM_COUNTER:  # the remote atomics count there too
            shmem += kernel.dsmem.wavefronts
            label += " + dsmem atomics"
        out.append(OpCompare(f"{label} wavefronts", counter, counters[counter], shmem))
    if MISC_COUNTER in counters:
        out.append(
            OpCompare(
                "misc wavefronts",
                MISC_COUNTER,
                counters[MISC_COUNTER],
                kernel.misc.wavefronts,
                estimate=True,
            )
        )
    present = [c for c in DSHARED_COUNTERS if c in counters]
    if present:
        measured = sum(counters[c] for c in present)
        out.append(OpCompare("dsmem requests", "+".join(present), measured, kernel.dsmem.requests))
    if DSHARED_SECTORS_COUNTER in counters:
        out.append(
            OpCompare(
                "dsmem sectors",
                DSHARED_SECTORS_COUNTER,
                counters[DSHARED_SECTORS_COUNTER],
                kernel.dsmem.sectors,
            )
        )
    return tuple(out)
