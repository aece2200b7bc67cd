"""Candidate pair rules against every measured 8- and 16-byte load (issue 30).

Run ``python -m tests.pair_candidates`` from the repository root: for each candidate it
prints the measured cases it misses (its total wavefronts / the H200's). The cases: the
public corpus and the probe sets (tests/hwtruth.py, their requests as the reference model
builds them), the single reads of tests/data/trace/pairs3 to pairs10 and casloops2's
``cs_lds64``, each as Nsight's per-op counter has it (docs/hardware-model.md 3).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any

from shmem_cli.spec.compile import spec_from_mapping

from . import reference
from .conftest import TRACE_DATA
from .hwtruth import case_to_spec, is_cas_loop, loop_invariant, probe_cases, public_cases

Addr = list[int | None]
Case = tuple[str, list[tuple[Addr, int]], int]  # name, requests (lanes, width), measured
Rule = Callable[[Addr, int], int]


def _pairs(addr: Addr) -> bool:
    return reference.pairs_up(addr, 1) or reference.pairs_up(addr, 2)


def _conflict(addr: Addr, width: int) -> bool:
    lanes = 256 // width
    return reference.asks_twice(
        addr, [list(range(p, p + lanes)) for p in range(0, 32, lanes)], width
    )


def _d1_clash(addr: Addr, width: int) -> bool:
    """Two active lanes at distance 1 on two words of one bank set."""
    sets = 128 // width
    return any(
        (a := addr[n]) is not None
        and (b := addr[n ^ 1]) is not None
        and a != b
        and a // width % sets == b // width % sets
        for n in range(32)
    )


def _vacuous(addr: Addr, d: int) -> bool:
    return not any(addr[n] is not None and addr[n ^ d] is not None for n in range(32))


def _rule(merges: Callable[[Addr, int], bool]) -> Rule:
    return lambda a, w: reference.cut_cost(a, w, (256 if merges(a, w) else 128) // w)


def _lanes(a: Addr) -> int:
    return sum(x is not None for x in a)


CANDIDATES: dict[str, Rule] = {
    "the pair rule (section 3, shmem's)": _rule(lambda a, w: _pairs(a)),
    "never merge": _rule(lambda a, w: False),
    "a d1 clash undoes a vacuous d2 merge": _rule(
        lambda a, w: (
            reference.pairs_up(a, 1)
            or (reference.pairs_up(a, 2) and not (_vacuous(a, 2) and _d1_clash(a, w)))
        )
    ),
    "a d1 clash undoes a d2 merge": _rule(
        lambda a, w: reference.pairs_up(a, 1) or (reference.pairs_up(a, 2) and not _d1_clash(a, w))
    ),
    "merge only without a conflict in the merged phases": _rule(
        lambda a, w: _pairs(a) and not _conflict(a, w)
    ),
    "d1 always, d2 only without a conflict": _rule(
        lambda a, w: reference.pairs_up(a, 1) or (reference.pairs_up(a, 2) and not _conflict(a, w))
    ),
    "a conflict undoes the merge with at most 8 lanes on": _rule(
        lambda a, w: _pairs(a) and (_lanes(a) > 8 or not _conflict(a, w))
    ),
    "... with at most 15 lanes on (shmem's until 2026-12-05)": _rule(
        lambda a, w: _pairs(a) and (_lanes(a) > 15 or not _conflict(a, w))
    ),
    "... with at most 16 lanes on": _rule(
        lambda a, w: _pairs(a) and (_lanes(a) > 16 or not _conflict(a, w))
    ),
}


def measured_cases() -> list[Case]:
    """Every measured case with an 8- or 16-byte load: its requests and measured wavefronts."""
    out: list[Case] = []
    corpus = public_cases() + [
        c for c in probe_cases() if not is_cas_loop(c) and not loop_invariant(c)
    ]
    for case in corpus:
        requests = _requests(case)
        if requests:
            out.append((case["name"], requests, case["measured"]["wavefronts"]))
    labs = ("pairs3", "pairs4", "pairs5", "pairs6", "pairs7", "pairs8", "pairs9", "pairs10")
    out += [c for lab in labs for c in _lab(lab, _pr_lanes(lab))]
    out += _lab("casloops2", _cs_lds64_lanes)
    return out


def _requests(case: dict[str, Any]) -> list[tuple[Addr, int]]:
    """The case's 8- and 16-byte load requests, as the reference model builds them."""
    requests: list[tuple[Addr, int]] = []
    keep = reference.request_cost

    def record(addr: Addr, op: str, width: int, atomic: str, matrices: int) -> Any:
        if op == "load" and width in (8, 16):
            requests.append((list(addr), width))
        return keep(addr, op, width, atomic, matrices)

    reference.request_cost = record
    try:
        reference.reference_analyze(spec_from_mapping(case_to_spec(case)))
    finally:
        reference.request_cost = keep
    return requests


def _pr_lanes(lab: str) -> Callable[[dict[str, Any]], tuple[Addr, int] | None]:
    """The lanes of a pair lab's launch: lane l reads element idx[l] (the input file)."""

    def lanes(launch: dict[str, Any]) -> tuple[Addr, int] | None:
        width = 8 if launch["kernel"].endswith("64") else 16
        raw = (TRACE_DATA / lab / launch["args"][1]["file"]).read_bytes()
        return [None if k < 0 else k * width for k in struct.unpack("<32i", raw)], width

    return lanes


def _cs_lds64_lanes(launch: dict[str, Any]) -> tuple[Addr, int] | None:
    if launch["kernel"] != "cs_lds64":
        return None
    zmask, _, _, mode, poff, hoff = launch["args"][1:]
    index = [((n & 1) * poff + (n >> 4) * hoff + ((n >> 1) & 7) * mode) % 64 for n in range(32)]
    return [8 * index[n] if zmask >> n & 1 else None for n in range(32)], 8


def _lab(name: str, lanes: Callable[[dict[str, Any]], tuple[Addr, int] | None]) -> list[Case]:
    folder = TRACE_DATA / name
    measured = {m["id"]: m for m in json.loads((folder / "measured.json").read_text())["launches"]}
    out: list[Case] = []
    for launch in json.loads((folder / "launches.json").read_text())["launches"]:
        read = None if launch["id"].endswith("_r2") else lanes(launch)
        if read is not None:
            m = measured[launch["id"]]
            lds = [i for i in m["instructions"] if "LDS" in i["sass"] and i["executed"]]
            # the one load of the read's kernel, or casloops2's first of three
            other = sum(i["wavefronts"] for i in lds[1:])
            out.append((f"{name}:{launch['id']}", [read], m["per_op"]["ld"]["wavefronts"] - other))
    return out


def main() -> None:
    cases = measured_cases()
    print(f"{len(cases)} measured cases with 8- or 16-byte loads")
    for name, rule in CANDIDATES.items():
        misses = [
            f"{case} {got}/{want}"
            for case, requests, want in cases
            if (got := sum(rule(a, w) for a, w in requests)) != want
        ]
        print(f"{name}: {len(misses)} misses" + (": " + ", ".join(misses) if misses else ""))


if __name__ == "__main__":
    main()
