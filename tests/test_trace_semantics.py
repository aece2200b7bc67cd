"""shmem trace against the H200 on the single-instruction probes (tests/data/trace/semantics):
guarded shared instructions (``@P0 LDS``, ``LDSM``, ``STS``, ``STSM`` of every width) in warps
where no lane, some lanes or every lane has its predicate on, partial warps and warps whose
other lanes exited before; and every native shared atomic (``ATOMS.AND/OR/XOR/MIN/MAX/INC/
DEC/EXCH/CAS`` of 32, 64 and 128 bits, ``atomicAdd`` of a constant or a per-lane value) on one,
2, 8 and 32 words, with every lane or a few, one warp and four; and (uniform/, the second
round) those atomics on one word whose address the compiler keeps in a uniform register.

Each launch is traced from its kept cubin as measured and compared per SASS instruction
with Nsight Compute's source counters (warp executions, wavefronts) and per op with its
whole-launch counters, for both runs the H200 made of it (the second's id ends in _r2);
what each thread got back is compared with what the GPU wrote.
"""

from __future__ import annotations

import io
import json
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import pytest

from shmem_cli.trace.emulator.state import GlobalMemory
from shmem_cli.trace.emulator.trace_error import TraceError
from shmem_cli.trace.result import KernelTrace

from .conftest import TRACE_DATA, needs_nvdisasm
from .misc_open import check_misc
from .test_trace_measured import traced

DATA = TRACE_DATA / "semantics"
# the first round, and the second's atomics on one word the compiler knows (uniform/)
FOLDERS = (DATA, DATA / "uniform")
FOLDER = {
    x["id"]: folder
    for folder in FOLDERS
    for x in json.loads((folder / "launches.json").read_text())["launches"]
}
LAUNCHES = {
    x["id"]: x
    for folder in FOLDERS
    for x in json.loads((folder / "launches.json").read_text())["launches"]
}
MEASURED = {
    m["id"]: m
    for folder in FOLDERS
    for m in json.loads((folder / "measured.json").read_text())["launches"]
}
SHARED = ("LDS", "STS", "ATOMS", "LDSM", "STSM")
# ldmatrix/stmatrix with only some lanes of a warp on (undefined in PTX): refused
PARTIAL_MATRIX = {x for x in LAUNCHES if x.startswith(("loads_lanes", "stores2_lanes"))}
COMPARED = sorted(x for x in MEASURED if x not in PARTIAL_MATRIX and not x.endswith("_r2"))
# the values several warps' atomics get back depend on the order the warps reached the word
# in (the trace serves warp 0 first; the GPU, whichever arrived first): their counts are
# compared, their values are not
VALUES = sorted(
    x
    for x in COMPARED
    if not (x.startswith("sa_") and x.endswith("_t128"))
    and not (x.startswith("su_") and x.endswith("_t64"))
)


def op_of(sass: str) -> str:
    return sass.split()[1 if sass.startswith("@") else 0].split(".")[0]


def measured(launch_id: str) -> dict[int, tuple[int, int, int]]:
    """pc -> (warp executions, wavefronts, ideal) of the shared instructions that ran."""
    return {
        i["pc"]: (i["executed"], i["wavefronts"], i["ideal"])
        for i in MEASURED[launch_id]["instructions"]
        if i["executed"] and op_of(i["sass"]) in SHARED
    }


def per_instruction(kernel: KernelTrace) -> dict[int, tuple[int, int, int]]:
    """pc -> (warp executions with or without a lane on, wavefronts, ideal), as Nsight
    counts (the ideal of a 64- or 128-bit atomic packs its lanes: hardware-model 8)."""
    return {
        a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts, a.cost.ideal_wavefronts)
        for a in kernel.accesses
        if a.cost.requests + a.predicated_off
    }


def per_op(kernel: KernelTrace) -> dict[str, Any]:
    """The whole-launch counters' terms: ldmatrix/stmatrix wavefronts count in op_ld/op_st;
    the requests counters count warps with a lane on, the `all` ones every warp at it."""
    t = kernel.totals
    off: dict[str, int] = {}
    for a in kernel.accesses:
        off[a.op] = off.get(a.op, 0) + a.predicated_off
    return {
        "ld": (t["load"].requests, t["load"].wavefronts + t["ldmatrix"].wavefronts),
        "st": (t["store"].requests, t["store"].wavefronts + t["stmatrix"].wavefronts),
        "atom": (t["atomic"].requests, t["atomic"].wavefronts),
        "ld_all": t["load"].requests + off.get("load", 0),
        "st_all": t["store"].requests + off.get("store", 0),
        "ldsm": t["ldmatrix"].requests,
        "stsm": t["stmatrix"].requests,
    }


def measured_per_op(launch_id: str) -> dict[str, Any]:
    p = MEASURED[launch_id]["per_op"]
    return {
        "ld": (p["ld"]["requests"], p["ld"]["wavefronts"]),
        "st": (p["st"]["requests"], p["st"]["wavefronts"]),
        "atom": (p["atom"]["requests"], p["atom"]["wavefronts"]),
        "ld_all": p["ld"]["requests_with_predicated_off"],
        "st_all": p["st"]["requests_with_predicated_off"],
        "ldsm": p["ldsm"]["requests"],
        "stsm": p["stsm"]["requests"],
    }


def gpu_output(launch_id: str) -> bytes:
    """What the launch left in its first buffer on the H200 (the run without the profiler)."""
    with tarfile.open(FOLDER[launch_id] / "outputs.tar.gz") as tar:
        f = tar.extractfile(f"outputs/{launch_id}.bin")
        assert f is not None
        return io.BytesIO(f.read()).getvalue()


# the launches whose op_misc the rule misses: (the rule's, the H200's, both runs). (The
# other ATOMS.ADD probes' misses were their lanes' S2R SR_LANEID and shuffles, 9e.)
MISC_OPEN = {
    "sa_add_v_t128": (64, 65),
}


# one launch of each kernel in `make test` (its first); its other launches (more warps, the
# other guards) are marked slow
FIRST = {LAUNCHES[x]["kernel"]: x for x in reversed(COMPARED)}


@needs_nvdisasm
@pytest.mark.parametrize(
    "launch_id",
    [x if FIRST[LAUNCHES[x]["kernel"]] == x else pytest.param(x, marks=pytest.mark.slow)
     for x in COMPARED],
)  # fmt: skip
def test_every_shared_instruction_op_and_value_as_measured(launch_id: str) -> None:
    # traced once, compared with both runs the H200 made of the launch
    memory = GlobalMemory()
    with tempfile.TemporaryDirectory() as folder:
        kernel = traced(LAUNCHES[launch_id], Path(folder), FOLDER[launch_id], memory=memory)
    for run in (launch_id, f"{launch_id}_r2"):
        assert per_instruction(kernel) == measured(run), run
        assert per_op(kernel) == measured_per_op(run), run
        # op_misc (hardware-model 9e): a warp at a shared instruction with no lane on costs 1
        misc = MEASURED[run]["misc_wavefronts"]
        check_misc(launch_id, kernel.misc.wavefronts, misc, MISC_OPEN)
    if launch_id in VALUES:
        size = LAUNCHES[launch_id]["args"][0]["zeros"]
        assert memory.read("param0")[:size] == gpu_output(launch_id)


@needs_nvdisasm
@pytest.mark.parametrize("launch_id", sorted(PARTIAL_MATRIX))
def test_a_matrix_instruction_with_some_lanes_of_a_warp_on_is_refused(
    launch_id: str, tmp_path: Path
) -> None:
    with pytest.raises(TraceError, match="executed by a partial warp"):
        traced(LAUNCHES[launch_id], tmp_path, DATA)
