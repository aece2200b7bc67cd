"""The result model: what every renderer (text, JSON, SARIF, ...) is built from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    from .spec.compile import SpecFile

from .plumbing.errors import ShmemError


@dataclass(frozen=True)
class BankCell:
    """One bank in one wavefront: the word it delivers and the lanes that get it."""

    bank: int
    word: int
    lanes: tuple[int, ...]


@dataclass(frozen=True)
class Wavefront:
    """One pass of the shared-memory data path: the phase it serves and its bank cells."""

    phase: int
    cells: tuple[BankCell, ...]


@dataclass(frozen=True)
class RequestDetail:
    """A request explained (``engine.explain_request``): lane addresses, wavefronts in order."""

    addresses: tuple[int | None, ...]  # per lane, None when inactive
    wavefronts: tuple[Wavefront, ...]
    phases: int
    lanes_per_phase: int
    merged_pairs: bool
    banks: int  # of the architecture: the columns of a bank table


@dataclass(frozen=True)
class RequestRef:
    """One warp-level request: which warp, which loop iteration."""

    warp: int
    iteration: int  # flat index over the loop nest, 0 without loops
    loop_values: tuple[tuple[str, int], ...]
    wavefronts: int
    ideal: int
    ways: int

    def describe(self) -> str:
        where = f"warp {self.warp}"
        if self.loop_values:
            where += ", " + ", ".join(f"{k}={v}" for k, v in self.loop_values)
        return where


class CostTotals:
    """What follows from request totals (mixed into results): excess, conflict-free, JSON."""

    requests: int
    wavefronts: int
    ideal_wavefronts: int
    max_ways: int
    conflicted_requests: int

    @property
    def excess_wavefronts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts

    @property
    def conflict_free(self) -> bool:
        return self.wavefronts == self.ideal_wavefronts

    @property
    def efficiency(self) -> float:
        return self.ideal_wavefronts / self.wavefronts if self.wavefronts else 1.0

    def cost_json(self) -> dict[str, Any]:
        """The request totals as every JSON output writes them, in this order."""
        return {
            "requests": self.requests,
            "wavefronts": self.wavefronts,
            "ideal_wavefronts": self.ideal_wavefronts,
            "excess_wavefronts": self.excess_wavefronts,
            "max_ways": self.max_ways,
            "conflict_free": self.conflict_free,
            "conflicted_requests": self.conflicted_requests,
        }


@dataclass(frozen=True)
class Totals(CostTotals):
    """Sums over requests, as analyze and sweep both count them (``totals.py``)."""

    requests: int = 0
    wavefronts: int = 0
    ideal_wavefronts: int = 0
    max_ways: int = 0  # the worst bank degree of any request
    cycles: int = 0
    conflicted_requests: int = 0  # requests costing more than their ideal

    def __add__(self, other: Totals) -> Totals:
        return Totals(
            requests=self.requests + other.requests,
            wavefronts=self.wavefronts + other.wavefronts,
            ideal_wavefronts=self.ideal_wavefronts + other.ideal_wavefronts,
            max_ways=max(self.max_ways, other.max_ways),
            cycles=self.cycles + other.cycles,
            conflicted_requests=self.conflicted_requests + other.conflicted_requests,
        )


@dataclass(frozen=True)
class AccessResult(CostTotals):
    """Totals over all warps and loop iterations of one access, plus the request to show."""

    name: str
    array: str
    op: str
    dtype: str
    width: int  # bytes per lane (16 per row for ldmatrix/stmatrix)
    requests: int
    wavefronts: int
    ideal_wavefronts: int
    max_ways: int
    cycles: int
    lane_accesses: int
    line: int | None
    column: int | None
    shown: RequestRef | None
    detail: RequestDetail | None
    warps: int
    iterations: int
    loops: tuple[str, ...]
    heat: npt.NDArray[np.int32] | None = field(default=None, compare=False, repr=False)
    # each request's ideal wavefronts, same shape as heat (-1: no request); set with heat
    heat_ideal: npt.NDArray[np.int32] | None = field(default=None, compare=False, repr=False)
    conflicted_requests: int = 0
    max_wavefronts_per_request: int = 0  # of the worst request, whichever request is shown

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "array": self.array,
            "op": self.op,
            "dtype": self.dtype,
            "bytes_per_lane": self.width,
            "line": self.line,
            "column": self.column,
            **self.cost_json(),
            "bandwidth_efficiency": round(self.efficiency, 4),
            "cycles": self.cycles,
            "lane_accesses": self.lane_accesses,
            "warps": self.warps,
            "iterations": self.iterations,
        }
        if self.shown is not None:
            out["worst_request"] = {
                "warp": self.shown.warp,
                "iteration": self.shown.iteration,
                "loop": dict(self.shown.loop_values),
                "wavefronts": self.shown.wavefronts,
                "ideal_wavefronts": self.shown.ideal,
                "max_ways": self.shown.ways,
            }
        if self.detail is not None:
            out["worst_request"]["wavefront_banks"] = [
                {
                    "phase": w.phase,
                    "banks": {
                        str(c.bank): {"word": c.word, "lanes": list(c.lanes)} for c in w.cells
                    },
                }
                for w in self.detail.wavefronts
            ]
        return out


@dataclass(frozen=True)
class FileResult:
    """One spec file: its accesses, or the error that stopped it."""

    path: str
    name: str
    accesses: tuple[AccessResult, ...] = ()
    error: ShmemError | None = None
    block: tuple[int, int, int] | None = None
    smem_bytes: int = 0
    # the compiled spec it was analyzed from (for --suggest: nothing is read twice)
    spec: SpecFile | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "name": self.name}
        if self.error is not None:
            out["error"] = {
                "message": self.error.message,
                "line": self.error.line,
                "column": self.error.column,
            }
        else:
            out["block"] = list(self.block or ())
            out["smem_bytes"] = self.smem_bytes
        out["accesses"] = [a.to_json() for a in self.accesses]
        return out


@dataclass(frozen=True)
class Report:
    files: tuple[FileResult, ...]

    @property
    def has_errors(self) -> bool:
        return any(f.error is not None for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": 1, "files": [f.to_json() for f in self.files]}
