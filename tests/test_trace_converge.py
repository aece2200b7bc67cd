"""The warp-reconvergence lab (issue 29, tests/data/trace/converge): the emulator's
per-instruction figures against what the H200 measured, and the lab's files and scripts.

measured.json (lab/distill.py from the lab's H200 run: Nsight Compute's source page and the
masks ``__activemask()`` gave in three plain runs and one under Nsight, all alike) holds each
launch's shared-memory instructions with their warp executions and wavefronts: a probe that
ran twice (31 lanes and the elected one) says the warp went on in two parts past the
``BSYNC``. The trace must give the same executions and wavefronts, strictly, for every
launch whose outcome does not depend on timing (:data:`TIMING`).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import shmem_cli

from .conftest import TRACE_DATA

LAB = TRACE_DATA / "converge"
MEASURED = json.loads((LAB / "measured.json").read_text())["launches"]
#: launches whose outcome depends on how long the threads take on the H200: k_producer's warp
#: rejoins in the second barrier's wait when its elected lane reaches that wait before the
#: barrier's phase completes (producer_late: whole) and stays apart when it comes later
#: (producer_ready, warp 1 filling every stage at once: split in every pass)
TIMING = {"producer_late", "producer_ready"}
#: the launch make test traces (the others in make test-slow): the yield splitting the warp
FAST = {"spin_late"}


def _launches() -> list[tuple[str, str, int]]:
    rows = []
    for line in (LAB / "lab" / "launches.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, kernel, n = line.split()
            rows.append((name, kernel, int(n)))
    return rows


def _traced(kernel: str, n: int) -> dict[int, tuple[int, int]]:
    """The trace's (requests, wavefronts) of each shared-memory instruction, by offset."""
    result = shmem_cli.trace(
        LAB / "converge.sm_90a.cubin",
        kernel=kernel,
        block=(64, 1, 1),
        args={"in": (LAB / "inputs" / "in.bin").read_bytes(), "n": n},
    )
    return {a.site.pc: (a.cost.requests, a.cost.wavefronts) for a in result.accesses}


def _measured(name: str) -> dict[int, tuple[int, int]]:
    """The H200's (warp executions, wavefronts) of each shared-memory instruction."""
    return {pc: (ex, wf) for pc, _, ex, _, wf in MEASURED[name]["shared"]}


def _speed(name: str) -> Any:
    return pytest.param(name, marks=[] if name in FAST else [pytest.mark.slow])


@pytest.mark.parametrize("name", [_speed(n) for n in MEASURED if n not in TIMING])
def test_the_trace_runs_each_shared_instruction_as_often_as_the_h200(name: str) -> None:
    """Each shared-memory instruction's warp executions and wavefronts as measured: the
    probes after the ``BSYNC`` run twice where the elected lane yielded (``YIELD``,
    ``NANOSLEEP``, ``NANOSLEEP.SYNCS``) while the others waited there, once where it ran
    long without yielding or waited in a try-wait alone, once after a ``WARPSYNC`` or a
    wait on one mbarrier that both parts reach before its phase completes, twice after a
    later ``BSSY``/``BSYNC`` each part armed alone."""
    launch = MEASURED[name]
    assert launch["runs_agree"], name
    assert _traced(launch["kernel"], launch["n"]) == _measured(name)


@pytest.mark.slow
def test_the_producer_whose_outcome_is_timing_is_one_the_h200_ran() -> None:
    """k_producer's warp rejoined or not as the H200's timing had it (:data:`TIMING`); the
    trace, whose threads take no time, gives one of the two measured outcomes for both
    launches: the elected lane that waits on a stage yields, the 31 lanes go on and wait
    in the second barrier's wait, where the elected lane joins them (producer_late)."""
    outcomes = [_measured(name) for name in sorted(TIMING)]
    assert outcomes[0] != outcomes[1]
    for name in sorted(TIMING):
        assert _traced(MEASURED[name]["kernel"], MEASURED[name]["n"]) in outcomes, name


def test_every_launch_names_a_kernel_and_has_the_emulators_figures() -> None:
    source = (LAB / "kernels" / "converge.cu").read_text()
    kernels = set(re.findall(r'extern "C" __global__ void (\w+)\(', source))
    predictions = json.loads((LAB / "trace_predictions.json").read_text())
    for name, kernel, _ in _launches():
        assert kernel in kernels, name
        assert kernel.encode() + b"\0" in (LAB / "converge.sm_90a.cubin").read_bytes()
        assert predictions[name]["kernel"] == kernel
        assert "error" not in predictions[name], name
        assert MEASURED[name]["kernel"] == kernel


def test_compare_lines_a_source_page_up_with_the_trace(tmp_path: Path) -> None:
    # a hand-written page for the first launch of k_spin (spin_late): the probe's LDS.128 at
    # 0x520 ran twice (31 lanes and 1: 3 wavefronts), the LDS at 0x530 once
    rows = [
        ('"Kernel Name","k_spin"',),
        (
            '"Address","Source","Instructions Executed","Thread Instructions Executed",'
            '"L1 Wavefronts Shared"',
        ),
        ('"0x7f0000000000","LDC R1, c[0x0][0x28]","2","64","0"',),
        ('"0x7f0000000480","BSYNC B0","2","32",""',),
        ('"0x7f0000000520","LDS.128 R4, [UR4]","2","32","3"',),
        ('"0x7f0000000530","LDS R0, [R0+UR4]","1","32","1"',),
    ]
    # the page prints each launch's table twice; then spin_ready's, its probe run once
    ready = [r[0].replace('"2","32","3"', '"1","32","2"') for r in rows]
    page = [r[0] for r in rows] * 2 + ready
    (tmp_path / "source.csv").write_text("\n".join(page) + "\n")
    (tmp_path / "plain_1.txt").write_text("spin_late k_spin n=50  probe0: 7ffffffe 00000001\n")
    predictions = {
        "spin_late": {
            "kernel": "k_spin",
            "accesses": [
                {"pc": 0x520, "sass": "LDS.128 R4, [UR4]", "requests": 1, "wavefronts": 2},
                {"pc": 0x530, "sass": "LDS R0, [R0+UR4]", "requests": 1, "wavefronts": 1},
            ],
        }
    }
    predictions["spin_ready"] = predictions["spin_late"]
    (tmp_path / "pred.json").write_text(json.dumps(predictions))
    script = LAB / "lab" / "compare.py"
    done = subprocess.run(
        [sys.executable, "-I", str(script), str(tmp_path), str(tmp_path / "pred.json")],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert "   masks: probe0: 7ffffffe 00000001 " in lines
    lds128 = next(x for x in lines if "LDS.128" in x)
    assert lds128.split()[-5:] == ["3", "trace", "1", "2", "DIFFERS"]
    assert lds128.split("H200")[1].split()[:3] == ["2", "32", "3"]
    lds = next(x for x in lines if "LDS R0" in x)
    assert "DIFFERS" not in lds
    assert any(x.split()[1:3] == ["BSYNC", "B0"] and x.split()[-2:] == ["2", "32"] for x in lines)
    ready_lds128 = next(
        x for x in lines[lines.index("== spin_ready (k_spin, n=0)") :] if "LDS.128" in x
    )
    assert ready_lds128.split("H200")[1].split() == ["1", "32", "2", "trace", "1", "2"]
    assert lines[-1] == "1 shared-memory instruction(s) differ"
