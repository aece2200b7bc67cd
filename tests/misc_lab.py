"""The op_misc labs of tests/data/trace (warpops, globalops, sregs, barriers, genatom,
genatom2, barrules: one CTA a launch, each counted twice under Nsight Compute by
lab_common/misc_lab.sh): a lab's launches, its measured counters, and the checks each of
their tests makes the same way."""

from __future__ import annotations

import json
from typing import Any

from shmem_cli.trace.result import KernelTrace

from . import hopper_lab as lab
from .conftest import TRACE_DATA
from .misc_open import Misses, check_misc

#: Nsight Compute's per-op shared counters, by op (``COUNTER + "misc"``)
COUNTER = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_"


class MiscLab:
    """tests/data/trace/NAME: its launches (launches.json) and what was measured of each."""

    def __init__(self, name: str) -> None:
        self.folder = TRACE_DATA / name
        launches = json.loads((self.folder / "launches.json").read_text())["launches"]
        self.launches: dict[str, dict[str, Any]] = {L["id"]: L for L in launches}
        measured = json.loads((self.folder / "measured.json").read_text())["launches"]
        self.measured: dict[str, dict[str, Any]] = {m["id"]: m for m in measured}

    def warps(self, lid: str) -> int:
        x, y, z = self.launches[lid]["block"]
        return -(-(x * y * z) // 32)

    def counter(self, lid: str, op: str) -> float:
        """Nsight's per-op wavefronts of ``op`` (misc, ld, st, atom) in the launch."""
        return float(self.measured[lid]["counters"].get(COUNTER + op, 0))

    def check_counted_twice_alike(self, count: int) -> None:
        """Every one of the ``count`` launches measured twice, op_misc the same both times."""
        assert len(self.measured) == len(self.launches) == count
        for lid, m in self.measured.items():
            assert m["measured_twice"] and COUNTER + "misc" in m["counters"], lid
            assert COUNTER + "misc" not in m.get("repeat_differs", {}), lid

    def check_traced(self, lid: str, misses: Misses, ops: tuple[str, ...] = ("ld",)) -> KernelTrace:
        """The launch traced: its op_misc as measured (or as ``misses`` lists it), and the
        per-op wavefronts of ``ops`` (ld: the loads and ldmatrix, st, atom) as measured; the
        trace."""
        kt, _ = lab.run(lid, self.folder)
        check_misc(lid, kt.misc.wavefronts, int(self.counter(lid, "misc")), misses)
        traced = {"ld": ("load", "ldmatrix"), "st": ("store", "stmatrix"), "atom": ("atomic",)}
        for op in ops:
            got = sum(kt.totals[name].wavefronts for name in traced[op])
            assert got == self.counter(lid, op), (lid, op)
        return kt
