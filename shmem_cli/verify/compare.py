"""Predicted against measured, access by access."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from ..plumbing.errors import ShmemError
from ..plumbing.frozen import frozen
from . import ncu, sass_check
from .codegen import Target

MATCH = "match"
MISMATCH = "mismatch"
UNMEASURABLE = "unmeasurable"
NOT_MEASURED = "not measured"
STATUSES = (MATCH, MISMATCH, UNMEASURABLE, NOT_MEASURED)


@frozen
class Outcome:
    """One access: what shmem predicted, what the GPU counted, and whether they agree."""

    target: Target
    status: str
    measured: ncu.Measured | None = None
    verdict: sass_check.Verdict | None = None  # None when no SASS dump was given
    note: str = ""
    basis: str = ""  # how the wavefronts matched: ncu.RAW, LESS_ARBITRATION, PART_ARBITRATION

    @property
    def predicted_requests(self) -> int:
        return self.target.predicted.cost.requests

    @property
    def predicted_wavefronts(self) -> int:
        return self.target.predicted.cost.wavefronts

    def to_json(self) -> dict[str, Any]:
        t = self.target
        out: dict[str, Any] = {
            "spec": t.spec.path,
            "access": t.access.name,
            "line": t.access.pos.line if t.access.pos else None,
            "kernel": t.kernel,
            "op": t.op,
            "instruction": t.expected.label,
            "status": self.status,
            "predicted": {
                "requests": self.predicted_requests,
                "wavefronts": self.predicted_wavefronts,
            },
            "measured": None,
            "sass": None,
            "note": self.note,
        }
        if self.measured is not None:
            m = self.measured
            out["measured"] = {
                "requests": m.requests,
                "wavefronts": m.wavefronts,
                "wavefronts_raw": m.wavefronts_raw,
                "arbitration": m.arbitration,
                "bank_conflicts": m.bank_conflicts,
                "requests_with_predicated_off": m.requests_with_predicated_off,
            }
            out["match_basis"] = self.basis or None
        if self.verdict is not None:
            out["sass"] = {
                "ok": self.verdict.ok,
                "found": self.verdict.found,
                "predicated": self.verdict.predicated,
            }
        return out


def compare_one(
    target: Target,
    launches: Mapping[str, list[ncu.Launch]],
    functions: Mapping[str, list[sass_check.Instruction]] | None,
) -> Outcome:
    verdict = None
    if functions is not None:
        verdict = sass_check.check(functions.get(target.kernel), target.expected)
        if not verdict.ok:
            return Outcome(target, UNMEASURABLE, verdict=verdict, note=verdict.reason)
    runs = launches.get(target.kernel)
    if not runs:
        return Outcome(
            target,
            NOT_MEASURED,
            verdict=verdict,
            note="no counters in the ncu CSV (did the launch fail?)",
        )
    try:
        got = ncu.measured(runs[0], target.op)
    except ShmemError as exc:
        return Outcome(target, NOT_MEASURED, verdict=verdict, note=exc.message)
    notes = []
    if len(runs) > 1:
        notes.append(f"{len(runs)} launches in the CSV; the first is used")
    if verdict is None:
        notes.append("SASS not checked")
    basis = got.basis(target.predicted.cost.wavefronts)
    same = got.requests == target.predicted.cost.requests and basis is not None
    return Outcome(target, MATCH if same else MISMATCH, got, verdict, "; ".join(notes), basis or "")


def compare(
    targets: list[Target],
    launches: list[ncu.Launch],
    functions: Mapping[str, list[sass_check.Instruction]] | None,
) -> list[Outcome]:
    """Every target's outcome, in order. ``functions`` is the parsed SASS dump, if any."""
    grouped = ncu.by_kernel(launches)
    return [compare_one(t, grouped, functions) for t in targets]


@frozen
class VerifyReport:
    """All outcomes of one run, and where they were measured."""

    outcomes: tuple[Outcome, ...]
    device: str = ""
    arch: str = ""
    errors: tuple[ShmemError, ...] = field(default=())

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def failed(self) -> bool:
        return self.count(MISMATCH) > 0

    @property
    def complete(self) -> bool:
        """Every access measured and checked."""
        return all(o.status in (MATCH, MISMATCH) for o in self.outcomes)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": 1,
            "device": self.device,
            "arch": self.arch,
            "counts": {s: self.count(s) for s in STATUSES},
            "accesses": [o.to_json() for o in self.outcomes],
            "errors": [
                {"path": e.path, "line": e.line, "column": e.column, "message": e.message}
                for e in self.errors
            ],
        }
