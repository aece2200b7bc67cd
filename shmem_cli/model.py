"""The result model: what every renderer (text, JSON, SARIF, ...) is built from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field, fields
from typing import TYPE_CHECKING, Any, Protocol, overload

import numpy as np

from .plumbing.frozen import frozen

if TYPE_CHECKING:
    import numpy.typing as npt

    from .spec.records import SpecFile

from .plumbing.errors import ShmemError


@frozen
class BankCell:
    """One bank in one wavefront: the word it delivers and the lanes that get it."""

    bank: int
    word: int
    lanes: tuple[int, ...]


@frozen
class Wavefront:
    """One pass of the shared-memory data path: the phase it serves and its bank cells."""

    phase: int
    cells: tuple[BankCell, ...]


@frozen
class RequestDetail:
    """A request explained (``engine.explain_request``): lane addresses, wavefronts in order."""

    addresses: tuple[int | None, ...]  # per lane, None when inactive
    wavefronts: tuple[Wavefront, ...]
    phases: int
    lanes_per_phase: int
    merged_pairs: bool
    banks: int  # of the architecture: the columns of a bank table


@frozen
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


@overload
def bank_conflicted(wavefronts: float, phases: float) -> bool: ...
@overload
def bank_conflicted(
    wavefronts: npt.NDArray[np.int64], phases: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]: ...
def bank_conflicted(wavefronts: Any, phases: Any) -> Any:
    """The one rule of a bank conflict (docs/hardware-model.md section 8): a request costs
    more wavefronts than its phases with an active lane. Its excess over the ideal beyond
    that (a partly active 8- or 16-byte request whose lanes would fit in fewer wavefronts)
    is no bank conflict. Every verdict (``conflicted_requests``, the heat map's cells) is
    this comparison, request by request (numbers or arrays of them)."""
    return wavefronts > phases


#: the verdicts of :attr:`Totals.verdict`: no bank conflict and no excess over the ideal; no
#: bank conflict but an excess (the phases themselves); a bank conflict; no request at all
OK, SPLIT, CONFLICT, IDLE = "ok", "ok*", "conflict", "idle"
VERDICTS = (OK, SPLIT, CONFLICT, IDLE)
#: a trace row's verdict in a retried compare-and-swap loop, whatever its counts (the GPU's
#: timing decides them): ``shmem_cli.trace.result.TraceAccess.verdict``
CONTENDED = "contended"


@frozen
class Totals:
    """Request totals: the engine's per-request answers summed (``analysis/totals.py``).

    The one record of cost figures: every result that reports them holds a ``Totals``
    (by composition) and writes them to JSON with :meth:`json`.
    """

    requests: int = 0
    wavefronts: int = 0
    ideal_wavefronts: int = 0
    max_ways: int = 0  # the worst bank degree of any request
    cycles: int = 0
    # requests with a bank conflict: costing more than their phases with an active lane (their
    # ideal, but where a partly active 8- or 16-byte request's lanes would pack into fewer)
    conflicted_requests: int = 0
    # the requests' phases with an active lane, added up: a conflict-free access costs no
    # more wavefronts than these (bank_conflicted, request by request)
    phases: int = 0
    # the wavefronts Nsight's per-instruction source counters count beyond ``wavefronts``
    # (some pair-merged loads, hardware.pairs.source_extra; may be negative): trace --compare
    source_extra: int = 0
    # Nsight's source-page ideal less ``ideal_wavefronts`` (pair-merged loads,
    # hardware.engine.source_ideal; may be negative): trace --compare, never the verdicts
    source_ideal_extra: int = 0

    def __add__(self, other: Totals) -> Totals:
        return Totals(
            requests=self.requests + other.requests,
            wavefronts=self.wavefronts + other.wavefronts,
            ideal_wavefronts=self.ideal_wavefronts + other.ideal_wavefronts,
            max_ways=max(self.max_ways, other.max_ways),
            cycles=self.cycles + other.cycles,
            conflicted_requests=self.conflicted_requests + other.conflicted_requests,
            phases=self.phases + other.phases,
            source_extra=self.source_extra + other.source_extra,
            source_ideal_extra=self.source_ideal_extra + other.source_ideal_extra,
        )

    def times(self, n: int) -> Totals:
        """These requests counted ``n`` times: the sums times ``n``, the worst degree kept
        (what adding ``n`` copies gives)."""
        return Totals(
            requests=self.requests * n,
            wavefronts=self.wavefronts * n,
            ideal_wavefronts=self.ideal_wavefronts * n,
            max_ways=self.max_ways,
            cycles=self.cycles * n,
            conflicted_requests=self.conflicted_requests * n,
            phases=self.phases * n,
            source_extra=self.source_extra * n,
            source_ideal_extra=self.source_ideal_extra * n,
        )

    @property
    def excess_wavefronts(self) -> int:
        return self.wavefronts - self.ideal_wavefronts

    @property
    def conflict_free(self) -> bool:
        return self.conflicted_requests == 0

    @property
    def excess_without_conflict(self) -> bool:
        """No bank conflict, yet more wavefronts than Nsight's ideal: the excess is the
        phases themselves (a partly active 8- or 16-byte access whose active lanes would fit
        in fewer wavefronts, docs/hardware-model.md section 8). The ``ok*`` :attr:`verdict`."""
        return self.verdict == SPLIT

    @property
    def verdict(self) -> str:
        """The one verdict of these requests, one of :data:`VERDICTS`: ``idle`` (no request),
        ``conflict`` (a bank conflict: ``conflicted_requests`` > 0, the worst bank's degree is
        ``max_ways``), ``ok*`` (no bank conflict, but more wavefronts than the ideal: the
        phases themselves, :attr:`excess_without_conflict`) or ``ok``. The text's first
        column shows it (a conflict as ``N-way``); JSON writes it."""
        if self.requests == 0:
            return IDLE
        if not self.conflict_free:
            return CONFLICT
        return SPLIT if self.excess_wavefronts > 0 else OK

    @property
    def efficiency(self) -> float:
        return self.ideal_wavefronts / self.wavefronts if self.wavefronts else 1.0

    def json(self, *keys: str) -> dict[str, Any]:
        """The figures named by ``keys`` (any of :data:`FIGURES`), in that order."""
        return {key: FIGURES[key](self) for key in keys}

    def cost_json(self) -> dict[str, Any]:
        """The request totals as every JSON output writes them, in this order."""
        return self.json(*COST_KEYS)


#: every cost figure a JSON output may write, by its key
FIGURES: dict[str, Callable[[Totals], Any]] = {
    "requests": lambda t: t.requests,
    "wavefronts": lambda t: t.wavefronts,
    "ideal_wavefronts": lambda t: t.ideal_wavefronts,
    "excess_wavefronts": lambda t: t.excess_wavefronts,
    "max_ways": lambda t: t.max_ways,
    "conflict_free": lambda t: t.conflict_free,
    "verdict": lambda t: t.verdict,
    "conflicted_requests": lambda t: t.conflicted_requests,
    "bandwidth_efficiency": lambda t: round(t.efficiency, 4),
    "cycles": lambda t: t.cycles,
}
#: the request totals of every JSON output, in order
COST_KEYS = (
    "requests",
    "wavefronts",
    "ideal_wavefronts",
    "excess_wavefronts",
    "max_ways",
    "conflict_free",
    "conflicted_requests",
    "verdict",
)


@frozen(kw_only=True)
class Cost(Totals):
    """What the requests of one site cost (``analysis/cost.py``, the one door to a cost):
    their totals (a cost *is* the :class:`Totals` of its requests: ``cost.wavefronts``), the
    request shown (with its bank table) and the warp x iteration heat map."""

    op: str  # a name of hardware.ops.OPS
    width: int  # bytes per lane (16 per row for ldmatrix/stmatrix)
    lane_accesses: int
    warps: int
    iterations: int
    shown: RequestRef | None = None
    detail: RequestDetail | None = None
    heat: npt.NDArray[np.int32] | None = field(default=None, compare=False, repr=False)
    # each request's phases with an active lane, same shape as heat (-1: no request); set with
    # heat: a request costing more wavefronts has a bank conflict (bank_conflicted)
    heat_phases: npt.NDArray[np.int32] | None = field(default=None, compare=False, repr=False)
    max_wavefronts_per_request: int = 0  # of the worst request, whichever request is shown

    @classmethod
    def of(cls, totals: Totals, **rest: Any) -> Cost:
        """The cost of requests whose totals are ``totals``; ``rest``: the other fields."""
        return cls(**{f.name: getattr(totals, f.name) for f in fields(Totals)}, **rest)

    @property
    def totals(self) -> Totals:
        """The figures alone (a plain :class:`Totals`, e.g. to add up or compare)."""
        return Totals(**{f.name: getattr(self, f.name) for f in fields(Totals)})

    def worst_json(self) -> dict[str, Any] | None:
        """The request shown, with its wavefronts bank by bank when explained."""
        if self.shown is None:
            return None
        out: dict[str, Any] = {
            "warp": self.shown.warp,
            "iteration": self.shown.iteration,
            "loop": dict(self.shown.loop_values),
            "wavefronts": self.shown.wavefronts,
            "ideal_wavefronts": self.shown.ideal,
            "max_ways": self.shown.ways,
        }
        if self.detail is not None:
            out["wavefront_banks"] = [
                {
                    "phase": w.phase,
                    "banks": {
                        str(c.bank): {"word": c.word, "lanes": list(c.lanes)} for c in w.cells
                    },
                }
                for w in self.detail.wavefronts
            ]
        return out


class Site(Protocol):
    """Where requests come from: a spec's access, or a SASS instruction of a trace."""

    @property
    def name(self) -> str: ...
    @property
    def line(self) -> int | None: ...
    @property
    def loops(self) -> tuple[str, ...]: ...
    def label(self, op: str) -> str:
        """What the site is, after its name in a report's heading."""
        ...


class SiteCost(Protocol):
    """A result made of a site and its cost, by composition (a spec's ``AccessResult``, a
    trace's ``TraceAccess``): what the renderers of both read."""

    @property
    def site(self) -> Site: ...
    @property
    def cost(self) -> Cost: ...


@frozen
class SpecSite:
    """One access of a spec: its name, array, element type, place and loops."""

    name: str
    array: str
    dtype: str
    line: int | None
    column: int | None
    loops: tuple[str, ...]

    def label(self, op: str) -> str:
        return f"{op} {self.array} ({self.dtype})"


@frozen
class AccessResult:
    """One access of a spec (its :class:`SpecSite`) and its :class:`Cost` over all its warps
    and loop iterations."""

    site: SpecSite
    cost: Cost

    # --- the Python API's names for them (docs/python.md), nothing more -----------------

    @property
    def name(self) -> str:
        return self.site.name

    @property
    def requests(self) -> int:
        return self.cost.requests

    @property
    def wavefronts(self) -> int:
        return self.cost.wavefronts

    @property
    def ideal_wavefronts(self) -> int:
        return self.cost.ideal_wavefronts

    @property
    def excess_wavefronts(self) -> int:
        return self.cost.excess_wavefronts

    @property
    def conflict_free(self) -> bool:
        return self.cost.conflict_free

    @property
    def efficiency(self) -> float:
        return self.cost.efficiency

    @property
    def max_ways(self) -> int:
        return self.cost.max_ways

    @property
    def cycles(self) -> int:
        return self.cost.cycles

    @property
    def conflicted_requests(self) -> int:
        return self.cost.conflicted_requests

    @property
    def shown(self) -> RequestRef | None:
        return self.cost.shown

    @property
    def detail(self) -> RequestDetail | None:
        return self.cost.detail

    @property
    def heat(self) -> npt.NDArray[np.int32] | None:
        return self.cost.heat

    @property
    def heat_phases(self) -> npt.NDArray[np.int32] | None:
        return self.cost.heat_phases

    def to_json(self) -> dict[str, Any]:
        site, cost = self.site, self.cost
        out: dict[str, Any] = {
            "name": site.name,
            "array": site.array,
            "op": cost.op,
            "dtype": site.dtype,
            "bytes_per_lane": cost.width,
            "line": site.line,
            "column": site.column,
            **cost.json(*COST_KEYS, "bandwidth_efficiency", "cycles"),
            "lane_accesses": cost.lane_accesses,
            "warps": cost.warps,
            "iterations": cost.iterations,
        }
        worst = self.cost.worst_json()
        if worst is not None:
            out["worst_request"] = worst
        return out


@frozen
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


@frozen
class Report:
    """What one ``analyze`` returns: a result per spec file, in the order given."""

    files: tuple[FileResult, ...]

    @property
    def has_errors(self) -> bool:
        return any(f.error is not None for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": 1, "files": [f.to_json() for f in self.files]}
