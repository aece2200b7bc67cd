"""Generate the tables of docs/hardware-model.md from the measured data in tests/data/.

Every number in those tables comes from here: the measured counters (read as
measured/h200.py reads them), shmem's own prediction (``shmem_cli.analyze``), and
three simpler models implemented below from scratch so that they can be
compared with the measurements:

* textbook:   the whole warp at once; cost = most distinct 4-byte words in one bank;
* literature: 128-byte phases (8-byte accesses by half-warp, 16-byte by quarter-warp,
  ldmatrix by matrix), the phases' costs added up; no pair rule;
* max-bank:   shmem's phases (pair rule included), but the cost is the most words any
  bank must deliver over *all* phases together, instead of the sum of the phases' costs.

``rule`` re-implements shmem's rules (docs/hardware-model.md) independently of the
engine; the script checks that it agrees with the engine on every case.

A probe3 case whose loop is *loop-invariant* (every lane's address and activity the
same in every iteration) is measured either once per iteration or once in all, as
nvcc chose to hoist the access out of the lab's loop or not; those cases are left out
of the model comparisons and get a table of their own ("loop-invariant").

Usage (from the repository root):

    python3 docs/tools/hardware_tables.py            # print every table
    python3 docs/tools/hardware_tables.py --write    # refresh the tables in the doc
    python3 docs/tools/hardware_tables.py --check    # exit 1 if the doc is stale

In the doc a table sits between ``<!-- table:NAME -->`` and ``<!-- /table -->``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from measured import h200 as hwtruth  # noqa: E402
from measured.h200 import (  # noqa: E402
    DATA,
    case_to_spec,
    first_iteration,
    is_cas_loop,
    loop_invariant,
    probe_cases,
    public_cases,
)
from shmem_cli import analyze  # noqa: E402
from shmem_cli.plumbing.errors import ShmemError  # noqa: E402
from shmem_cli.spec.compile import spec_from_mapping  # noqa: E402
from shmem_cli.spec.layout import resolve  # noqa: E402
from shmem_cli.spec.space import Space  # noqa: E402

DOC = ROOT / "docs" / "hardware-model.md"
WARP = 32
BANKS = 32

# --- the cases and their per-request addresses -----------------------------------------


@dataclass(frozen=True)
class Request:
    """One warp-level request: byte address of every active lane."""

    lanes: dict[int, int]


@dataclass(frozen=True)
class Case:
    name: str
    source: str  # "public" or "probe"
    raw: dict[str, Any]
    size: int  # bytes per lane (16 per row for ldmatrix/stmatrix)
    op: str
    atomic: str
    matrices: int
    requests: tuple[Request, ...]
    shmem_requests: int | None  # None: shmem refuses the case
    shmem_wavefronts: int | None
    shmem_ideal: int | None
    shmem_cycles: int | None

    @property
    def measured(self) -> int:
        return int(self.raw["measured"]["wavefronts"])

    @property
    def measured_requests(self) -> int:
        return int(self.raw["measured"]["requests"])

    @property
    def sass(self) -> dict[str, int]:
        return dict(self.raw.get("sass") or self.raw["measured"].get("sass") or {})


def _requests(spec_map: dict[str, Any]) -> tuple[Request, ...]:
    spec = spec_from_mapping(spec_map)
    layout = resolve(spec)
    space = Space(spec, layout, spec.accesses[0])
    out = []
    for batch in space.batches():
        for addr, act in zip(batch.addr, batch.active, strict=True):
            if act.any():
                out.append(Request({int(i): int(addr[i]) for i in np.nonzero(act)[0]}))
    return tuple(out)


def _case(raw: dict[str, Any], source: str) -> Case:
    spec_map = case_to_spec(raw)
    op = raw["op"]
    matrices = int(raw.get("matrices") or 1)
    size = 16 if op in ("ldmatrix", "stmatrix") else _dtype_size(raw["dtype"])
    try:
        res = analyze(spec_map).accesses[0]
        shmem: tuple[int | None, ...] = (
            res.requests,
            res.wavefronts,
            res.ideal_wavefronts,
            res.cycles,
        )
    except ShmemError:
        shmem = (None, None, None, None)
    return Case(
        name=raw["name"],
        source=source,
        raw=raw,
        size=size,
        op=op,
        atomic=raw.get("atomic") or "inc",
        matrices=matrices,
        requests=() if shmem[0] is None else _requests(spec_map),
        shmem_requests=shmem[0],
        shmem_wavefronts=shmem[1],
        shmem_ideal=shmem[2],
        shmem_cycles=shmem[3],
    )


def _dtype_size(name: str) -> int:
    from shmem_cli.hardware import dtypes

    dt = dtypes.lookup(name)
    assert dt is not None, name
    return dt.size


PROBE_SETS = {"h200_probe": "probe", "h200_probe2": "random", "h200_probe3": "probe3"}
SET_NAMES = {
    "public": "public corpus",
    "probe": "rule probes",
    "random": "random probes",
    "probe3": "probe3 cases",
}


@cache
def probe_set_of() -> dict[str, str]:
    """Case name -> "probe" (aimed at the rules), "random" (the second, random set) or
    "probe3" (the third: 2-D arrays, 1- to 3-D blocks, loops, predicates)."""
    unknown = set(hwtruth.PROBE_SETS) - set(PROBE_SETS)
    if unknown:
        raise SystemExit(f"new probe set(s) {sorted(unknown)}: give them a label in PROBE_SETS")
    out = {}
    for stem, label in PROBE_SETS.items():
        for lab in json.loads((DATA / f"{stem}_cases.json").read_text()):
            out[lab["name"]] = label
    return out


@cache
def all_cases() -> dict[str, Case]:
    cases = [_case(c, "public") for c in public_cases()]
    cases += [_case(c, probe_set_of()[c["name"]]) for c in probe_cases()]
    return {c.name: c for c in cases}


def public() -> list[Case]:
    return [c for c in all_cases().values() if c.source == "public"]


def probes() -> list[Case]:
    """The 45 cases measured to pin the rules down."""
    return [c for c in all_cases().values() if c.source == "probe"]


def randoms() -> list[Case]:
    """The 140 random cases of the second probe run."""
    return [c for c in all_cases().values() if c.source == "random"]


def probe3() -> list[Case]:
    """The 200 random cases of the third probe run."""
    return [c for c in all_cases().values() if c.source == "probe3"]


@cache
def _invariant_names() -> frozenset[str]:
    return frozenset(c.name for c in all_cases().values() if loop_invariant(c.raw))


def invariant(c: Case) -> bool:
    """Same addresses and active lanes in every iteration of the case's loop."""
    return c.name in _invariant_names()


def probe3_varying() -> list[Case]:
    """The probe3 cases the compiler cannot have hoisted: no loop, or one that varies."""
    return [c for c in probe3() if not invariant(c)]


def loop_invariants() -> list[Case]:
    return [c for c in all_cases().values() if invariant(c)]


def iterations(c: Case) -> int:
    loop = c.raw.get("loop")
    return int(loop[2] - loop[1]) if loop else 1


@cache
def one_iteration(name: str) -> tuple[int, int]:
    """shmem's (requests, wavefronts) for the case cut down to its first loop iteration."""
    (acc,) = analyze(case_to_spec(first_iteration(all_cases()[name].raw))).accesses
    return acc.requests, acc.wavefronts


def per_spec(c: Case) -> tuple[int, int]:
    assert c.shmem_requests is not None and c.shmem_wavefronts is not None, c.name
    return c.shmem_requests, c.shmem_wavefronts


def measured_pair(c: Case) -> tuple[int, int]:
    return c.measured_requests, c.measured


def hoisted(c: Case) -> str:
    """Whether the measurement is one iteration's count ("yes") or every iteration's ("no")."""
    every, once, got = per_spec(c), one_iteration(c.name), measured_pair(c)
    if every == once == got:
        return "cannot tell" + (" (no lane active)" if got == (0, 0) else "")
    if got == once:
        return "yes"
    if got == every:
        return "no"
    raise SystemExit(f"{c.name}: measured {got} is neither every iteration {every} nor one {once}")


# --- the models ----------------------------------------------------------------------------


def words(addr: int, size: int) -> range:
    """The 4-byte words a lane's access touches."""
    return range(addr // 4, (addr + size - 1) // 4 + 1)


def bank_counts(addrs: Iterable[int], size: int, combine: bool = True) -> Counter[int]:
    """Words each bank must deliver: distinct words (combine) or one per lane and word."""
    ws: Iterable[int] = [w for a in addrs for w in words(a, size)]
    if combine:
        ws = set(ws)
    return Counter(w % BANKS for w in ws)


def phase_cost(addrs: Sequence[int], size: int, combine: bool = True) -> int:
    counts = bank_counts(addrs, size, combine)
    return max(counts.values(), default=0)


def pairs_up(lanes: dict[int, int], distance: int) -> bool:
    """Lane n and n^distance read the same address wherever both are active."""
    return all(lanes[n] == lanes[n ^ distance] for n in lanes if (n ^ distance) in lanes)


def pair_distance(case: Case, req: Request) -> int | None:
    """The pair distance (1 or 2) that merges this request's lanes, or None."""
    if case.op != "load" or case.size <= 4:
        return None
    for d in (1, 2):
        if pairs_up(req.lanes, d):
            return d
    return None


def phases(case: Case, req: Request, pair_rule: bool) -> list[list[int]]:
    """The lanes of every phase (active or not) of one request."""
    if case.op in ("ldmatrix", "stmatrix"):
        return [list(range(8 * m, 8 * m + 8)) for m in range(case.matrices)]
    if case.op == "atomic" or case.size <= 4:
        return [list(range(WARP))]
    per = 128 // case.size
    if pair_rule and pair_distance(case, req) is not None:
        per *= 2
    return [list(range(p, p + per)) for p in range(0, WARP, per)]


def active_addrs(req: Request, lanes: Iterable[int]) -> list[int]:
    return [req.lanes[n] for n in lanes if n in req.lanes]


def textbook(case: Case, req: Request) -> int:
    lanes = range(8 * case.matrices) if case.op in ("ldmatrix", "stmatrix") else range(WARP)
    return phase_cost(active_addrs(req, lanes), case.size)


def literature(case: Case, req: Request) -> int:
    return sum(phase_cost(active_addrs(req, p), case.size) for p in phases(case, req, False))


def max_bank(case: Case, req: Request) -> int:
    total: Counter[int] = Counter()
    for p in phases(case, req, True):
        total.update(bank_counts(active_addrs(req, p), case.size))
    return max(total.values(), default=0)


def rule(case: Case, req: Request) -> int:
    """shmem's rules, written out again from docs/hardware-model.md."""
    if case.op == "atomic" and case.atomic in ("add", "exch"):
        addrs = list(req.lanes.values())
        if case.atomic == "add" and len(set(addrs)) == 1:
            return 1
        return phase_cost(addrs, case.size, combine=False)
    return sum(phase_cost(active_addrs(req, p), case.size) for p in phases(case, req, True))


def ideal(case: Case, req: Request) -> int:
    """Phases with at least one active lane."""
    return sum(1 for p in phases(case, req, True) if active_addrs(req, p))


def predict(model: Callable[[Case, Request], int], case: Case) -> int:
    return sum(model(case, r) for r in case.requests)


MODELS: dict[str, Callable[[Case, Request], int]] = {
    "textbook": textbook,
    "literature": literature,
    "max-bank": max_bank,
    "rule": rule,
}


def check_rule_matches_engine() -> None:
    bad = [
        c.name
        for c in all_cases().values()
        if c.shmem_wavefronts is not None and predict(rule, c) != c.shmem_wavefronts
    ]
    if bad:
        raise SystemExit(f"the re-implemented rules disagree with the engine on {bad}")


# --- formatting ----------------------------------------------------------------------------


def md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(x) for x in row) + " |")
    return "\n".join(lines)


def code(text: str) -> str:
    return "`" + text.replace("|", "\\|") + "`"


def describe(case: Case) -> str:
    """A compact C-like rendering of the access: `a[lane/2]`, predicate, loop, block."""
    raw = case.raw
    idx = "".join(f"[{e}]" for e in raw["index"])
    text = f"a{idx}"
    if case.op == "store":
        text += " = v"
    elif case.op == "atomic":
        fn = lab_atomic_fn().get(case.name, "atomicAdd")
        text = f"{fn}(&a{idx}, {'1' if case.atomic == 'inc' else 'v'})"
    elif case.op in ("ldmatrix", "stmatrix"):
        text = f"{case.op}.x{case.matrices}{'.trans' if raw.get('trans') else ''} &a{idx}"
    out = code(text)
    if raw.get("when"):
        out += " if " + code(str(raw["when"]))
    if raw.get("loop"):
        var, lo, hi = raw["loop"]
        out += " for " + code(f"{var} in {lo}..{hi - 1}")
    block = raw["block"]
    if list(block) != [32, 1, 1]:
        out += " block " + "x".join(str(b) for b in block)
    return out


@cache
def lab_atomic_fn() -> dict[str, str]:
    """The CUDA atomic function of each probe (atomicAdd unless the lab case says otherwise)."""
    out = {}
    for stem in PROBE_SETS:
        for c in json.loads((DATA / f"{stem}_cases.json").read_text()):
            out[c["name"]] = c.get("atomfn", "atomicAdd")
    return out


def array(case: Case) -> str:
    """The declared C array, e.g. `float32 [32][33]`."""
    raw = case.raw
    return code(raw["dtype"] + " " + "".join(f"[{d}]" for d in raw["shape"]))


def sass(case: Case) -> str:
    names = [k for k in case.sass if k.startswith(("LDS", "STS", "ATOMS", "LDSM", "STSM"))]
    if case.op == "load" or case.op == "ldmatrix":
        # a load kernel also stores its result with an STS that is not part of the case
        names = [k for k in names if not k.startswith("STS")] or names
    if case.op == "atomic":
        names = [k for k in names if k.startswith("ATOMS")]
    return code(" ".join(names))


def shmem_wf(case: Case) -> str:
    return "refused" if case.shmem_wavefronts is None else str(case.shmem_wavefronts)


# --- the tables ----------------------------------------------------------------------------


def pick(names: Iterable[str]) -> list[Case]:
    cases = all_cases()
    return [cases[n] for n in names]


def t_words() -> str:
    names = [
        "char_stride1",
        "char_stride2",
        "char_stride4",
        "char_stride5",
        "c_bytes_same_word",
        "v_a_13_char",
        "v_a_10_char",
        "short_stride2",
        "h2_stride1",
        "s_st_conflict",
        "f32_stride2",
        "f32_stride3",
        "f32_stride33",
        "f32_pairs",
        "f32_halfbcast",
        "f32_two_words_bank0",
        "f32_offset_col",
        "f32_st_same",
    ]
    return md_table(
        ["case", "array", "access", "SASS", "measured", "textbook", "shmem"],
        (
            [c.name, array(c), describe(c), sass(c), c.measured, predict(textbook, c), shmem_wf(c)]
            for c in pick(names)
        ),
    )


def t_phases() -> str:
    names = [
        "double_seq",
        "float2_seq",
        "double_quarter_same",
        "double_lo_hi_swap",
        "double_col_32x33",
        "int4_seq",
        "float4_rev",
        "float4_st_seq",
        "int4_stride2",
        "float4_col_32x8",
        "p16_bcast_half",
        "p16_lane_q0q2",
        "p16_st_q0",
        "v_a_26_int4",
        "v_a_03_int4",
        "v_a_00_int4",
    ]
    return md_table(
        ["case", "array", "access", "measured", "textbook", "phases (no pair rule)", "shmem"],
        (
            [
                c.name,
                array(c),
                describe(c),
                c.measured,
                predict(textbook, c),
                predict(literature, c),
                shmem_wf(c),
            ]
            for c in pick(names)
        ),
    )


def deciding_sum_vs_max(cases: Iterable[Case]) -> list[Case]:
    """Cases where summing the phases and the max-bank reading predict differently."""
    return [
        c
        for c in cases
        if c.shmem_wavefronts is not None
        and c.op != "atomic"
        and predict(max_bank, c) != predict(rule, c)
    ]


def t_sum_vs_max_random() -> str:
    out = []
    for label, pool in (
        (f"the {len(randoms())} random probes", randoms()),
        (f"the {len(probe3_varying())} probe3 cases that are not loop-invariant", probe3_varying()),
    ):
        cases = deciding_sum_vs_max(pool)
        agree_sum = sum(1 for c in cases if c.measured == predict(rule, c))
        agree_max = sum(1 for c in cases if c.measured == predict(max_bank, c))
        out.append(
            f"Among {label}, {len(cases)} decide between the two readings: "
            f"the measurement equals the sum over phases on {agree_sum} of them and the max-bank "
            f"count on {agree_max}."
        )
    return "\n".join(out)


def t_sum_vs_max() -> str:
    rows = []
    for c in deciding_sum_vs_max(public() + probes()):
        mb, sm = predict(max_bank, c), predict(rule, c)
        rows.append([c.name, array(c), describe(c), c.measured, mb, sm])
    return md_table(
        [
            "case",
            "array",
            "access",
            "measured",
            "max over banks of summed counts",
            "sum over phases (shmem)",
        ],
        rows,
    )


PAIR_CASES = [
    "double_pairs",
    "p8_bcast",
    "p8_vacuous",
    "p8_int2_pairs_loop",
    "p8_partial_warp",
    "v_a_08_float2",
    "v_a_16_float2",
    "rnd_a18_float2",
    "x_double_ld_n2",
    "p8_mixed",
    "p8_n1_h1conf",
    "p8_n4",
    "p8_n16",
    "float4_bcast",
    "int4_bcast",
    "int4_div4",
    "p16_d2_pairs",
    "p16_n1_x4",
    "p16_n2_partial",
    "p16_vacuous",
    "p16_partner_off",
    "p16_bcast_q0q2",
    "p16_multiwarp",
    "x_float4_ld_n2",
    "p16_mixed",
    "int4_mod8",
    "v_a_24_int4",
    "x_double_st_pairs",
    "p8_bcast_st",
    "x_float4_st_pairs",
    "p16_st_bcast",
]


def pair_note(c: Case) -> str:
    ds = {pair_distance(c, r) for r in c.requests}
    if c.op != "load":
        return "store: never"
    if ds == {None}:
        return "no"
    found = sorted(f"n^{d}" for d in ds if d is not None)
    return ", ".join(found) + (" (some requests)" if None in ds else "")


def t_pairs() -> str:
    cases = pick(PAIR_CASES)
    return md_table(
        ["case", "array", "access", "pairs?", "measured", "literature", "shmem"],
        (
            [
                c.name,
                array(c),
                describe(c),
                pair_note(c),
                c.measured,
                predict(literature, c),
                shmem_wf(c),
            ]
            for c in cases
        ),
    )


def literature_misses(cases: Iterable[Case]) -> list[Case]:
    return [c for c in cases if c.op != "atomic" and predict(literature, c) != c.measured]


def t_model_errors() -> str:
    pub = public()
    prb = [c for c in probes() if c.op != "atomic"]
    rnd = [c for c in randoms() if c.op != "atomic"]
    pr3 = [c for c in probe3_varying() if c.op != "atomic"]

    def misses(model: Callable[[Case, Request], int], cases: list[Case]) -> int:
        return sum(1 for c in cases if predict(model, c) != c.measured)

    def shmem_misses(cases: list[Case]) -> int:
        return sum(
            1
            for c in cases
            if (c.shmem_requests, c.shmem_wavefronts) != (c.measured_requests, c.measured)
        )

    wide = [c for c in pub if c.size > 4 and c.op in ("load", "store")]
    matrix = [c for c in pub if c.op in ("ldmatrix", "stmatrix")]
    rows = []
    for label, model in (
        ("textbook (whole warp)", textbook),
        ("literature (phases, no pair rule)", literature),
        ("max over banks of summed counts", max_bank),
    ):
        rows.append(
            [
                label,
                misses(model, pub),
                misses(model, wide),
                misses(model, matrix),
                misses(model, prb),
                misses(model, rnd),
                misses(model, pr3),
            ]
        )
    rows.append(
        [
            "shmem",
            shmem_misses(pub),
            shmem_misses(wide),
            shmem_misses(matrix),
            shmem_misses(prb),
            shmem_misses(rnd),
            shmem_misses(pr3),
        ]
    )
    return md_table(
        [
            "model",
            f"wrong of {len(pub)} public cases",
            f"of which 8/16-byte ({len(wide)})",
            f"of which ldmatrix/stmatrix ({len(matrix)})",
            f"wrong of {len(prb)} non-atomic rule probes",
            f"wrong of {len(rnd)} random probes",
            f"wrong of {len(pr3)} probe3 cases (no atomics, no loop-invariant case)",
        ],
        rows,
    )


def t_literature_misses() -> str:
    out = []
    for label, cases in (
        ("public corpus", public()),
        ("rule probes", probes()),
        ("random probes", randoms()),
        ("probe3 cases, loop-invariant ones left out", probe3_varying()),
    ):
        names = [c.name for c in literature_misses(cases)]
        out.append(f"{label} ({len(names)}): " + ", ".join(code(n) for n in names))
    return "; ".join(out)


def t_matrix() -> str:
    cases = [c for c in public() + probes() if c.op in ("ldmatrix", "stmatrix")]
    return md_table(
        ["case", "array", "access", "SASS", "measured", "textbook", "per matrix (shmem)"],
        (
            [c.name, array(c), describe(c), sass(c), c.measured, predict(textbook, c), shmem_wf(c)]
            for c in cases
        ),
    )


def t_matrix_random() -> str:
    cases = [c for c in randoms() if c.op in ("ldmatrix", "stmatrix")]
    right = sum(1 for c in cases if c.shmem_wavefronts == c.measured)
    textbook_right = sum(1 for c in cases if predict(textbook, c) == c.measured)
    return (
        f"The random probes add {len(cases)} more ldmatrix/stmatrix cases: the per-matrix rule "
        f"matches {right} of them, the textbook model {textbook_right}."
    )


def t_atomics() -> str:
    cases = [c for c in all_cases().values() if c.op == "atomic"]
    rows = []
    for c in cases:
        rows.append(
            [
                c.name,
                array(c),
                describe(c),
                sass(c),
                c.measured_requests,
                c.measured,
                "refused (CAS loop)" if is_cas_loop(c.raw) else c.atomic,
                shmem_wf(c),
            ]
        )
    return md_table(
        [
            "case",
            "array",
            "access",
            "SASS",
            "measured requests",
            "measured wavefronts",
            "spec `atomic:`",
            "shmem",
        ],
        rows,
    )


def t_requests() -> str:
    names = [
        "partial16_col",
        "pred_odd_col",
        "pred_warp1_col",
        "p8_partial_warp",
        "p16_partial_warp",
        "rnd_a02_short",
        "loop_stride_i",
        "transpose_ld_col",
    ]
    return md_table(
        ["case", "array", "access", "warps x iterations", "measured requests", "shmem requests"],
        (
            [
                c.name,
                array(c),
                describe(c),
                _warps_iters(c),
                c.measured_requests,
                c.shmem_requests if c.shmem_requests is not None else "refused",
            ]
            for c in pick(names)
        ),
    )


def _warps_iters(c: Case) -> str:
    threads = int(np.prod(c.raw["block"]))
    loop = c.raw.get("loop")
    iters = (loop[2] - loop[1]) if loop else 1
    return f"{-(-threads // WARP)} x {iters}"


def timing() -> list[tuple[str, float, float]]:
    rows = []
    for line in (DATA / "h200_timing_public.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, cyc, wf = line.split()
        rows.append((name, float(cyc), float(wf)))
    return rows


def shmem_cycles_per_request(c: Case) -> float:
    assert c.shmem_cycles is not None and c.shmem_requests
    return c.shmem_cycles / c.shmem_requests


def t_timing16() -> str:
    cases = all_cases()
    rows = []
    for name, cyc, wf in timing():
        c = cases[name]
        if c.size != 16 or c.op not in ("load", "store"):
            continue
        rows.append(
            [
                name,
                array(c),
                describe(c),
                f"{cyc:.2f}",
                f"{wf:.2f}",
                f"{shmem_cycles_per_request(c):g}",
                f"{cyc - shmem_cycles_per_request(c):+.2f}",
            ]
        )
    return md_table(
        [
            "case",
            "array",
            "access",
            "SM cycles/request",
            "wavefronts/request",
            "shmem cycles",
            "overhead",
        ],
        rows,
    )


def empty_phases(c: Case) -> int:
    """Phases without an active lane, over all requests of the case."""
    return sum(1 for r in c.requests for p in phases(c, r, True) if not active_addrs(r, p))


def t_timing_partial() -> str:
    cases = all_cases()
    rows = []
    for name, cyc, wf in timing():
        c = cases[name]
        n = empty_phases(c)
        if n:
            rows.append(
                [
                    name,
                    array(c),
                    describe(c),
                    len(phases(c, c.requests[0], True)),
                    n,
                    f"{cyc:.2f}",
                    f"{wf:.2f}",
                    f"{shmem_cycles_per_request(c):g}",
                ]
            )
    return md_table(
        [
            "case",
            "array",
            "access",
            "phases",
            "phases without active lanes",
            "SM cycles/request",
            "wavefronts/request",
            "shmem cycles",
        ],
        rows,
    )


def t_timing_summary() -> str:
    cases = all_cases()
    groups: dict[str, list[float]] = {}
    excess: dict[str, list[float]] = {}
    for name, cyc, wf in timing():
        c = cases[name]
        if c.op in ("ldmatrix", "stmatrix"):
            key = "ldmatrix / stmatrix"
        elif c.size == 16:
            key = "16-byte load / store"
        elif c.size == 8:
            key = "8-byte load / store"
        else:
            key = "1-, 2-, 4-byte access"
        groups.setdefault(key, []).append(cyc / wf)
        excess.setdefault(key, []).append(cyc - shmem_cycles_per_request(c))
    rows = []
    for key in (
        "1-, 2-, 4-byte access",
        "8-byte load / store",
        "16-byte load / store",
        "ldmatrix / stmatrix",
    ):
        r, e = groups[key], excess[key]
        rows.append(
            [
                key,
                len(r),
                f"{min(r):.2f}",
                f"{statistics.median(r):.2f}",
                f"{max(r):.2f}",
                f"{min(e):+.2f} .. {max(e):+.2f}",
            ]
        )
    return md_table(
        [
            "kind",
            "rows",
            "cycles / wavefront: min",
            "median",
            "max",
            "cycles - shmem estimate (per request)",
        ],
        rows,
    )


@cache
def probe_counters() -> dict[str, dict[str, float]]:
    out = {}
    for stem in PROBE_SETS:
        for r in json.loads((DATA / f"{stem}_results.json").read_text()):
            out[r["name"]] = r["counters"]
    return out


def _unit(op: str) -> str:
    return {"load": "ld", "ldmatrix": "ld", "store": "st", "stmatrix": "st", "atomic": "atom"}[op]


ARBITRATION = "l1tex__data_bank_conflicts_type_arbitration.sum"


def arbitration(c: Case) -> int:
    return int(probe_counters()[c.name].get(ARBITRATION, 0))


def ideal_rows(cases: Iterable[Case]) -> list[tuple[Case, int, int, int]]:
    """Per non-CAS probe: wavefronts, bank-conflict counter, shmem ideal.

    Like the wavefront counter, the bank-conflict counter includes the passes lost to
    arbitration; the measured wavefronts have them taken off, so the conflicts do too
    (it matters for three probe3 cases; no other probe has any arbitration).
    """
    counters = probe_counters()
    out = []
    for c in cases:
        if c.shmem_ideal is None:
            continue
        k = counters[c.name]
        conflicts = int(k[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{_unit(c.op)}.sum"])
        out.append((c, c.measured, conflicts - arbitration(c), c.shmem_ideal))
    return out


def t_ideal() -> str:
    rows = [
        [c.name, array(c), describe(c), wf, bc, wf - bc, predict(ideal, c), si]
        for c, wf, bc, si in ideal_rows(probes())
        if bc
    ]
    return md_table(
        [
            "case",
            "array",
            "access",
            "wavefronts",
            "bank_conflicts",
            "wavefronts - bank_conflicts",
            "phases with active lanes",
            "shmem ideal",
        ],
        rows,
    )


def t_ideal_summary() -> str:
    out = []
    for label, cases in (
        ("rule probes", probes()),
        ("random probes", randoms()),
        ("probe3 cases, loop-invariant ones left out", probe3_varying()),
    ):
        rows = ideal_rows(cases)
        phases = sum(1 for c, wf, bc, _ in rows if wf - bc == predict(ideal, c))
        agree = sum(1 for _, wf, bc, si in rows if wf - bc == si)
        conflicted = sum(1 for _, _, bc, _ in rows if bc)
        arbitrated = sum(1 for c, _, _, _ in rows if arbitration(c))
        out.append([label, len(rows), conflicted, arbitrated, phases, agree])
    return md_table(
        [
            "set",
            "cases (no CAS loop)",
            "with bank conflicts",
            "with arbitration",
            "wavefronts - bank_conflicts = phases with active lanes",
            "= shmem ideal",
        ],
        out,
    )


def _reproduced(c: Case) -> bool:
    return (c.shmem_requests, c.shmem_wavefronts) == measured_pair(c)


def t_evidence() -> str:
    rows = []
    total = [0, 0, 0, 0, 0]
    for source, stem in (
        ("public", "h200_public.json"),
        ("probe", "h200_probe_*.json"),
        ("random", "h200_probe2_*.json"),
        ("probe3", "h200_probe3_*.json"),
    ):
        cases = [c for c in all_cases().values() if c.source == source]
        counts = [
            len(cases),
            sum(1 for c in cases if c.raw.get("loop")),
            sum(1 for c in cases if invariant(c)),
            sum(1 for c in cases if is_cas_loop(c.raw)),
            sum(1 for c in cases if _reproduced(c)),
        ]
        total = [t + n for t, n in zip(total, counts, strict=True)]
        rows.append([SET_NAMES[source], code(stem), *counts])
    rows.append(["all", "", *total])
    table = md_table(
        [
            "set",
            "files",
            "cases",
            "with a loop",
            "loop-invariant (section 9)",
            "compare-and-swap atomics (section 5)",
            "shmem = measured requests and wavefronts",
        ],
        rows,
    )
    hoist = sum(1 for c in loop_invariants() if hoisted(c) == "yes")
    kept = sum(1 for c in loop_invariants() if _reproduced(c))
    if total[4] != total[0] - total[3] - hoist:
        raise SystemExit("some case is neither reproduced, refused nor hoisted")
    return (
        table
        + "\n\n"
        + (
            f"`tests/test_hwtruth.py` runs every one of the {total[0]} cases through shmem and "
            f"requires the exact measured requests and wavefronts, with two exceptions: the "
            f"{total[3]} atomics that compile to a compare-and-swap loop must be refused instead "
            f"(section 5), and a loop-invariant case may have been measured as one iteration, "
            f"because the compiler hoisted the access out of the loop ({hoist} of the "
            f"{total[2]}, section 9). shmem's counts equal the measured ones on all "
            f"{total[4]} other cases, the {kept} loop-invariant ones measured at the spec's "
            f"count included."
        )
    )


def t_loop_invariant() -> str:
    rows = []
    for c in loop_invariants():
        every, once, got = per_spec(c), one_iteration(c.name), measured_pair(c)
        rows.append([c.name, describe(c), iterations(c), *every, *once, *got, hoisted(c)])
    return md_table(
        [
            "case",
            "access",
            "iterations",
            "shmem requests",
            "shmem wavefronts",
            "one iteration: requests",
            "one iteration: wavefronts",
            "measured requests",
            "measured wavefronts",
            "hoisted",
        ],
        rows,
    )


def t_loop_invariant_summary() -> str:
    cases = loop_invariants()
    looped = [c for c in all_cases().values() if c.raw.get("loop")]
    verdicts = Counter(hoisted(c) for c in cases)
    kept = [c.name for c in cases if hoisted(c) == "no"]
    unclear = [c.name for c in cases if hoisted(c).startswith("cannot tell")]
    return (
        f"Of the {len(looped)} measured cases with a loop, {len(cases)} are loop-invariant, all "
        f"of them probe3 cases. The measurement equals one iteration's count on "
        f"{verdicts['yes']} of them (hoisted) and every iteration's count on {len(kept)} "
        f"({', '.join(code(n) for n in kept)}); on {len(unclear)} "
        f"({', '.join(code(n) for n in unclear)}) no lane is ever active, so both counts are "
        f"zero and the data cannot tell."
    )


TABLES: dict[str, Callable[[], str]] = {
    "evidence": t_evidence,
    "words": t_words,
    "phases": t_phases,
    "sum-vs-max": t_sum_vs_max,
    "sum-vs-max-random": t_sum_vs_max_random,
    "pairs": t_pairs,
    "model-errors": t_model_errors,
    "literature-misses": t_literature_misses,
    "matrix": t_matrix,
    "matrix-random": t_matrix_random,
    "atomics": t_atomics,
    "requests": t_requests,
    "timing16": t_timing16,
    "timing-partial": t_timing_partial,
    "timing-summary": t_timing_summary,
    "ideal": t_ideal,
    "ideal-summary": t_ideal_summary,
    "loop-invariant": t_loop_invariant,
    "loop-invariant-summary": t_loop_invariant_summary,
}

MARK = re.compile(r"(<!-- table:([\w-]+) -->\n)(.*?)(<!-- /table -->)", re.S)


def refresh(text: str) -> str:
    def sub(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in TABLES:
            raise SystemExit(f"unknown table {name!r} in {DOC}")
        return m.group(1) + TABLES[name]() + "\n" + m.group(4)

    return MARK.sub(sub, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--write", action="store_true", help="refresh the tables in docs/hardware-model.md"
    )
    ap.add_argument("--check", action="store_true", help="exit 1 if the doc's tables are stale")
    args = ap.parse_args(argv)
    check_rule_matches_engine()
    if args.write or args.check:
        old = DOC.read_text()
        new = refresh(old)
        if args.check:
            if new != old:
                print(f"{DOC} is stale: run python3 docs/tools/hardware_tables.py --write")
                return 1
            return 0
        DOC.write_text(new)
        return 0
    for name, fn in TABLES.items():
        print(f"## {name}\n\n{fn()}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
