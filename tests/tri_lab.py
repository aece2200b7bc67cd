"""A measured Triton lab of tests/data/triton (mma36, ops36's ``gpu/``): each launch's
counters per run as its parse.py wrote them, and the per-op figures a trace must give.

Nsight Compute's per-op ``ld``/``st`` wavefronts may exceed the sum of the same run's SASS
rows (the source counters) by a few, by amounts that change from run to run: timing, not an
access rule (tests/data/triton/mma36/README.md). :meth:`Lab.expected` gives the rows' sum
there, and checks the excess is small: at most ``most``, or, where the lab kept the run's
arbitration conflicts (ops36 on), at most ``most`` more than what the two timing sources
could add to it in that run (:meth:`Lab.allowance`; Nsight Compute reads the counters in several
replays of the launch, so one run's conflicts and its per-op wavefronts are not counted
in the same replay)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .test_trace_triton_tutorial36b import measured_per_op

#: the op each shared opcode's source-counter wavefronts are counted under
SOURCE_OP = {"LDS": "ld", "LDSM": "ld", "STS": "st", "STSM": "st"}


def opcode(sass: str) -> str:
    """``LDS`` of ``@!P0 LDS.U16 R1, [R2]``."""
    return sass.split()[1 if sass.startswith("@") else 0].split(".")[0]


class Lab:
    """The launches and runs of one lab folder (``launches.json``, ``measured.json``)."""

    def __init__(self, data: Path) -> None:
        launches = json.loads((data / "launches.json").read_text())["launches"]
        self.launches: dict[str, dict[str, Any]] = {L["id"]: L for L in launches}
        self.runs: dict[str, list[dict[str, Any]]] = json.loads(
            (data / "measured.json").read_text()
        )["runs"]
        self.by_run = {run: {m["id"]: m for m in ms} for run, ms in self.runs.items()}

    def measured(self, run: str, ident: str) -> dict[str, Any]:
        """A run's per-op counters shaped as the tests' ``per_op`` gives the trace's."""
        return measured_per_op(self.by_run[run][ident]["per_op"])

    def source_sums(self, run: str, ident: str) -> dict[str, int]:
        """A run's ld and st wavefronts as the sum of its SASS rows (the source counters)."""
        sums = {"ld": 0, "st": 0}
        for i in self.by_run[run][ident]["instructions"]:
            op = SOURCE_OP.get(opcode(i["sass"]))
            if op:
                sums[op] += i["wavefronts"]
        return sums

    def excess(self, run: str, ident: str) -> int:
        """The per-op ld and st wavefronts of a run beyond its SASS rows."""
        exp = self.measured(run, ident)
        return sum(exp[op][1] - rows for op, rows in self.source_sums(run, ident).items())

    def allowance(self, run: str, ident: str) -> dict[str, int] | None:
        """What a run's per-op ld and st may each hold beyond the rows, where the lab kept
        the run's arbitration conflicts (None where not): under either, those conflicts (a
        wavefront each, replayed when warps contend for the LSU); under ``st`` also every
        cp.async fill wavefront of the rows (a fill booked under ``st``, mma36's README;
        ops36 had no ld excess with fills). Both change with timing. With fills the ``st``
        bound is loose (ops36: 1,088 to 15,872 fill wavefronts, a measured st excess of at
        most 72): it says where an excess may come from, not how large it is."""
        kept = self.by_run[run][ident]["per_op"].get("arbitration")
        if kept is None:
            return None
        fills = sum(
            i["wavefronts"]
            for i in self.by_run[run][ident]["instructions"]
            if opcode(i["sass"]) == "LDGSTS"
        )
        conflicts = int(kept["conflicts"])
        return {"ld": conflicts, "st": conflicts + fills}

    def expected(self, run: str, ident: str, most: int) -> dict[str, Any]:
        """The run's per-op counters with ld and st wavefronts the rows' sums, the per-op
        figures checked to lie above them, never below: by at most ``most`` each, or, where
        the lab kept the run's arbitration conflicts, each by at most ``most`` plus its
        :meth:`allowance`, and together by at most ``most`` plus the conflicts and fills
        (the conflicts counted once)."""
        exp = self.measured(run, ident)
        allowed = self.allowance(run, ident) or {"ld": 0, "st": 0}
        total = 0
        for op, rows in self.source_sums(run, ident).items():
            requests, wavefronts = exp[op]
            bound = most + allowed[op]
            assert 0 <= wavefronts - rows <= bound, (run, ident, op, wavefronts, rows, bound)
            total += wavefronts - rows
            exp[op] = (requests, rows)
        together = most + max(allowed.values())  # st's: the conflicts and the fills
        assert total <= together, (run, ident, total, together)
        return exp
