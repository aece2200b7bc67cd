"""The warp-reconvergence lab (issue 29, tests/data/trace/converge): its files agree with
each other, and its comparison script lines a source page up with the trace's figures.

The lab is not measured yet; these checks keep it runnable until it is: every launch names
a kernel of the source, the emulator's recorded figures cover every launch, and
``lab/compare.py`` (standard library, run by hand) reads a hand-written source page: the
H200's executions beside the trace's, a difference marked, the probes' masks shown.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from .conftest import TRACE_DATA

LAB = TRACE_DATA / "converge"


def _launches() -> list[tuple[str, str, int]]:
    rows = []
    for line in (LAB / "lab" / "launches.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, kernel, n = line.split()
            rows.append((name, kernel, int(n)))
    return rows


def test_every_launch_names_a_kernel_and_has_the_emulators_figures() -> None:
    source = (LAB / "kernels" / "converge.cu").read_text()
    kernels = set(re.findall(r'extern "C" __global__ void (\w+)\(', source))
    predictions = json.loads((LAB / "trace_predictions.json").read_text())
    for name, kernel, _ in _launches():
        assert kernel in kernels, name
        assert kernel.encode() + b"\0" in (LAB / "converge.sm_90a.cubin").read_bytes()
        assert predictions[name]["kernel"] == kernel
        assert "error" not in predictions[name], name


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
    (tmp_path / "source.csv").write_text("\n".join(r[0] for r in rows) + "\n")
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
    assert lines[-1] == "1 shared-memory instruction(s) differ"
