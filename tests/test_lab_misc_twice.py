"""The small op_misc labs (tests/data/trace/tidreads, fencemerge, attnorder, attnmid) share
one run script and one parser in tests/data/lab_common (misc_twice.sh, misc_twice_parse.py).
They run by hand on a GPU machine; here the script runs as each lab's README prints it, with
stand-ins for nvidia-smi, nvcc and ncu that log their calls (ncu printing a table of two
launches in its ``--csv`` form), and the parser must read the stand-in's figures back."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import TEST_DATA, TRACE_DATA

REPO = TEST_DATA.parents[1]
COMMON = TEST_DATA / "lab_common"
LABS = ("tidreads", "fencemerge", "attnorder", "attnmid")
MISC = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum"
INST = "smsp__inst_executed.sum"
# what ncu --csv prints: its own lines, then a row per launch and counter (a count over 999
# with a thousands separator)
NCU = f"""#!/bin/bash
echo "ncu $*" >> "$STUB_LOG"
[ "$1" = --version ] && {{ echo "ncu stand-in"; exit 0; }}
echo "==PROF== Connected to process 1"
echo '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"'
echo '"0","k(float *, int)","{MISC}","","1,204"'
echo '"0","k(float *, int)","{INST}","inst","12"'
echo '"1","k(float *, int)","{MISC}","","3"'
echo '"1","k(float *, int)","{INST}","inst","40"'
echo "==PROF== Disconnected from process 1"
"""
NVCC = '#!/bin/bash\necho "nvcc $*" >> "$STUB_LOG"\necho built > "${@: -2:1}"\n'
SMI = '#!/bin/bash\necho "GPU 0: stand-in"\n'


def _commands(lab: str) -> tuple[str, str]:
    """The run and parse commands the lab's README prints."""
    text = (TRACE_DATA / lab / "README.md").read_text()
    run = re.findall(r"`(OUT=DIR sh tests/data/lab_common/misc_twice\.sh [^`]+)`", text)
    parse = re.findall(r"`(python3 tests/data/lab_common/misc_twice_parse\.py [^`]+)`", text)
    assert len(run) == len(parse) == 1, lab
    return run[0], parse[0]


@pytest.mark.parametrize("lab", LABS)
def test_the_readme_runs_the_shared_script_with_the_kept_cubins_flags(lab: str) -> None:
    run, parse = _commands(lab)
    words = run.split()
    assert words[3] == lab
    build = (TRACE_DATA / lab / "build.sh").read_text()
    flags = re.findall(r"nvcc -cubin -O3 (.+) -o ", build)
    assert flags == [" ".join(words[4:])]  # the program is built as the kept cubin was
    assert parse.split()[-1] == f"tests/data/trace/{lab}/measured.json"
    assert not (TRACE_DATA / lab / "lab" / "run.sh").exists()  # no copy of its own
    assert not (TRACE_DATA / lab / "lab" / "parse.py").exists()
    assert (TRACE_DATA / lab / "lab" / "main.cu").is_file()


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("lab", LABS)
def test_the_script_counts_the_labs_program_twice_and_the_parser_reads_it(
    lab: str, tmp_path: Path
) -> None:
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, text in (("nvcc", NVCC), ("ncu", NCU), ("nvidia-smi", SMI)):
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    log = tmp_path / "log"
    env = dict(os.environ, PATH=f"{tools}:{os.environ['PATH']}", STUB_LOG=str(log))
    run, _ = _commands(lab)
    words = run.split()
    out = tmp_path / "out"
    argv = ["sh", *words[2:]]
    done = subprocess.run(
        argv, cwd=REPO, env=dict(env, OUT=str(out)), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    calls = log.read_text().splitlines()
    flags = " ".join(words[4:])
    assert f"nvcc -O3 {flags} -o {out}/lab main.cu" in calls
    assert f"nvcc -cubin -O3 {flags} -o {out}/kernels.cubin ../kernels.cu" in calls
    profiled = [c for c in calls if c.startswith("ncu --clock-control none --csv")]
    assert profiled == [f"ncu --clock-control none --csv --metrics {MISC},{INST} {out}/lab"] * 2
    assert "cubin differs" in (out / "build.txt").read_text()  # the stand-in's is no cubin
    parsed = subprocess.run(
        [sys.executable, str(COMMON / "misc_twice_parse.py"), str(out)],
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(parsed.stdout)
    assert doc == {"gpu": "GPU 0: stand-in", "runs": [[1204, 3]] * 2, "inst": [[12, 40]] * 2}
