"""Turn an op_misc lab's results (misc_lab.sh: raw_all_K.csv, source_all_K.csv and
raw_repeat_K.csv for the chunk of launches that starts at K, outputs/) into the lab's
measured.json and outputs/: per launch every counter of the run (with the repeat's value
where it differs) and Nsight Compute's executions of every SASS instruction that touches
memory, synchronises, reads a special register or works across the warp.

Usage: python3 tests/data/lab_common/misc_lab_parse.py LAB RESULTS_DIR
(LAB: warpops, globalops, sregs, barriers, genatom, genatom2 or barrules: a folder of
tests/data/trace)
"""

import os
import re
import sys
from pathlib import Path

import ncu_pages as pages

INSTR = re.compile(
    r"^(LDS|STS|LDG|STG|LD|ST|ATOM|ATOMS|ATOMG|REDG|QSPC|S2R|S2UR|CS2R|LDC|ULDC|SHFL|VOTE"
    r"|VOTEU|MATCH|REDUX|WARPSYNC|NANOSLEEP|SYNCS|BAR|BRA|EXIT)\b"
)

if __name__ == "__main__":
    lab, results = sys.argv[1], sys.argv[2]
    os.environ["LAB_DATA"] = str(Path(__file__).resolve().parents[1] / "trace" / lab)
    sys.argv = [sys.argv[0], results]
    pages.misc_lab(os.environ["LAB_DATA"] + "/lab/run.sh", INSTR)
