"""Turn the measured H200 cases (tests/data/) into shmem spec mappings.

Read by the tests (through tests/hwtruth.py) and by docs/tools/hardware_tables.py,
which must not import from tests/: the reader lives here, outside both.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"

_NAMES = {"tx": "threadIdx.x", "ty": "threadIdx.y", "tz": "threadIdx.z"}
_LAB_DTYPES = {
    "char": "int8",
    "short": "int16",
    "half": "float16",
    "int": "int32",
    "float": "float32",
    "double": "float64",
    "float2": "float2",
    "int2": "int2",
    "float4": "float4",
    "int4": "int4",
    "double2": "double2",
    "ull": "uint64",
}
_LAB_OPS = {"ld": "load", "st": "store", "atom": "atomic", "ldsm": "ldmatrix", "stsm": "stmatrix"}


def c_expr(text: str) -> str:
    """Rename the corpus's tx/ty/tz to threadIdx.x/y/z."""
    return re.sub(r"\b(tx|ty|tz)\b", lambda m: _NAMES[m.group(1)], str(text))


def case_to_spec(case: dict[str, Any]) -> dict[str, Any]:
    """One corpus case (h200_public.json format) as a spec mapping."""
    access: dict[str, Any] = {
        "name": case["name"],
        "array": "a",
        "op": case["op"],
        "index": [c_expr(e) for e in case["index"]],
    }
    if case.get("loop"):
        var, lo, hi = case["loop"]
        access["loop"] = {var: f"{lo}..{hi - 1}"}
    if case.get("when"):
        access["when"] = c_expr(case["when"])
    if case["op"] in ("ldmatrix", "stmatrix"):
        access["matrices"] = case.get("matrices") or 1
        access["trans"] = bool(case.get("trans"))
    if case["op"] == "atomic" and case.get("atomic"):
        access["atomic"] = case["atomic"]
    return {
        "name": case["name"],
        "block": list(case["block"]),
        "arrays": {"a": {"dtype": case["dtype"], "shape": list(case["shape"]), "offset": 0}},
        "accesses": [access],
    }


def public_cases() -> list[dict[str, Any]]:
    return list(json.loads((DATA / "h200_public.json").read_text())["cases"])


PROBE_SETS = ("h200_probe", "h200_probe2", "h200_probe3")


def probe_cases(sets: tuple[str, ...] = PROBE_SETS) -> list[dict[str, Any]]:
    """The cases measured for this project, in corpus format.

    ``h200_probe``: 45 cases aimed at the rules (pair merging, atomics, ldmatrix);
    ``h200_probe2``: 140 random 8-/16-byte, sub-word and ldmatrix/stmatrix cases;
    ``h200_probe3``: 200 random cases on 2-D arrays and 1-3-D blocks, 81 with a loop.
    All measured on 2026-11-29 on the H200 (files ``tests/data/<set>_cases.json``
    in the lab format and ``<set>_results.json`` with the raw counters).

    Counters are read per op: a load kernel also stores its result once, which is
    not part of the case. Atomics with a per-lane value (``atomval``) are ATOMS.ADD
    / MIN / MAX (``atomic: add``); atomicExch is ``exch``; plain atomicAdd(p, 1)
    compiles to ATOMS.POPC.INC (``inc``).
    """
    out = []
    for name in sets:
        out.extend(_probe_set(name))
    return out


def _probe_set(name: str) -> list[dict[str, Any]]:
    cases = json.loads((DATA / f"{name}_cases.json").read_text())
    results = {r["name"]: r for r in json.loads((DATA / f"{name}_results.json").read_text())}
    out = []
    for lab in cases:
        counters = results[lab["name"]]["counters"]
        op = _LAB_OPS[lab["op"]]
        unit = {"load": "ld", "store": "st", "atomic": "atom", "ldmatrix": "ld", "stmatrix": "st"}[
            op
        ]
        if op == "ldmatrix":
            requests = counters["smsp__sass_inst_executed_op_ldsm.sum"]
        elif op == "stmatrix":
            requests = counters["smsp__sass_inst_executed_op_shared_stsm.sum"]
        else:
            requests = counters[f"smsp__sass_inst_executed_op_shared_{unit}.sum"]
        wavefronts = counters[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{unit}.sum"]
        wavefronts -= counters.get("l1tex__data_bank_conflicts_type_arbitration.sum", 0)
        atomic = None
        if op == "atomic":
            fn = lab.get("atomfn", "atomicAdd")
            atomic = "exch" if fn == "atomicExch" else ("add" if "atomval" in lab else "inc")
        case = {
            "name": lab["name"],
            "dtype": _LAB_DTYPES[lab["ctype"]],
            "shape": lab["dims"],
            "block": lab["block"],
            "op": op,
            "index": lab["idx"],
            "loop": [lab["loop"][0], lab["loop"][1], lab["loop"][2]] if lab["loop"] else None,
            "when": lab["when"],
            "matrices": (lab.get("ldsm") or {}).get("num"),
            "trans": (lab.get("ldsm") or {}).get("trans"),
            "atomic": atomic,
            "sass": results[lab["name"]]["sass"],
            "measured": {"requests": int(requests), "wavefronts": int(wavefronts)},
        }
        out.append(case)
    return out


def is_cas_loop(case: dict[str, Any]) -> bool:
    """Atomics the compiler turned into a compare-and-swap loop (not one instruction)."""
    return any("CAS" in k for k in case.get("sass", {}))


def first_iteration(case: dict[str, Any]) -> dict[str, Any]:
    """The case with its loop cut down to its first iteration."""
    if not case.get("loop"):
        return case
    var, lo, _hi = case["loop"]
    return {**case, "loop": [var, lo, lo + 1]}


def loop_invariant(case: dict[str, Any]) -> bool:
    """Whether a looped case touches the same addresses with the same lanes in every iteration."""
    if not case.get("loop"):
        return False
    import numpy as np

    from shmem_cli.spec.compile import spec_from_mapping
    from shmem_cli.spec.layout import resolve
    from shmem_cli.spec.space import Space

    spec = spec_from_mapping(case_to_spec(case))
    space = Space(spec, resolve(spec), spec.accesses[0])
    seen = None
    for batch in space.batches():
        rows = np.where(batch.active, batch.addr, -1).reshape(batch.iterations, space.warps, -1)
        for it in rows:
            if seen is None:
                seen = it
            elif not np.array_equal(it, seen):
                return False
    return True
