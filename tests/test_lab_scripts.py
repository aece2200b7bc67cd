"""The Nsight Compute labs' run.sh (tests/data/trace/*/lab) share their steps through
tests/data/lab_common/ncu_lab.sh. They run by hand on a GPU machine; here each runs as its
documented command (``OUT=... bash tests/data/trace/LAB/lab/run.sh``) with stand-ins for
nvidia-smi, nvcc and ncu that log their calls, and must write the pages its parse_ncu.py
reads: raw_all_K.csv (and source_all_K.csv where SourceCounters are asked) and
raw_repeat_K.csv for each chunk of launches K, with the counters this ncu knows."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from .conftest import TRACE_DATA

REPO = TRACE_DATA.parents[2]
NVCC = """#!/bin/bash
echo "nvcc $*" >> "$STUB_LOG"
[ "$1" = --version ] && { echo "Cuda compilation tools, release 13.0"; exit 0; }
out=; prev=; for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
case "$out" in
  *harness) printf '#!/bin/bash\\necho "harness $*" >> "$STUB_LOG"\\n' > "$out"; chmod +x "$out";;
  ?*) echo built > "$out";;
esac
"""
NCU = """#!/bin/bash
echo "ncu $*" >> "$STUB_LOG"
case "$1" in
  --version) echo "ncu stand-in";;
  --query-metrics) printf '%s\\n' smsp__inst_executed \\
    l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld;;
  -i) echo "page";;
  *) o=; p=; for a in "$@"; do [ "$p" = -o ] && o=$a; p=$a; done; echo rep > "$o.ncu-rep";;
esac
"""
SMI = '#!/bin/bash\necho "nvidia-smi $*" >> "$STUB_LOG"\necho "GPU 0: stand-in"\n'
# lab: its archive, chunk size of the pass with SourceCounters and of the repeat
LABS = {
    "debug_builds": ("dbg", 13, 13),
    "dsmrule": ("dsmemrule", 16, 31),
    "fields": ("fields", 1 << 20, 1 << 20),
    "genatom2": ("genatom2", 28, 27),  # misc_lab.sh, its own counters and repeat chunk
    "barrules": ("barrules", 28, 28),  # likewise: one report a pass
    "miscops": ("miscops", None, 60),
}


@pytest.fixture
def stand_ins(tmp_path: Path) -> dict[str, str]:
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, text in (("nvcc", NVCC), ("ncu", NCU), ("nvidia-smi", SMI)):
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{tools}:{os.environ['PATH']}", STUB_LOG=str(tmp_path / "log"))
    env.pop("LAB_DATA", None)
    return env


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("lab", sorted(LABS))
def test_a_lab_writes_the_pages_its_parser_reads(
    lab: str, stand_ins: dict[str, str], tmp_path: Path
) -> None:
    name, source_chunk, repeat_chunk = LABS[lab]
    out = tmp_path / "out"
    script = f"tests/data/trace/{lab}/lab/run.sh"
    env = dict(stand_ins, OUT=str(out))
    done = subprocess.run(["bash", script], cwd=REPO, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    with tarfile.open(out / f"{name}.tar.gz") as tar:
        names = {Path(n).name for n in tar.getnames()}
    n = len(json.loads((TRACE_DATA / lab / "launches.json").read_text())["launches"])
    for k in range(0, n, repeat_chunk):
        assert f"raw_repeat_{k}.csv" in names
    first = source_chunk or 60
    for k in range(0, n, first):
        assert f"raw_all_{k}.csv" in names
        assert (f"source_all_{k}.csv" in names) is (source_chunk is not None)
    assert {"gpu.txt", "build.txt", "plain.txt", "metrics_used.txt"} <= names
    log = (tmp_path / "log").read_text()
    profiled = [line for line in log.splitlines() if " --metrics " in line and " -o " in line]
    # the counters asked: only those this ncu knows, by the lists' rule
    assert profiled and all(
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum" in line
        for line in profiled
        if "--metrics smsp__inst_executed.sum " not in line  # miscops' executions pass
    )
