"""Turn the genatom lab's results (lab/run.sh: raw_all_K.csv, source_all_K.csv and
raw_repeat_K.csv for the chunk of launches that starts at K, outputs/) into ../measured.json
and ../outputs/. Usage: python3 parse_ncu.py RESULTS_DIR. Per launch: every counter of the
run (with the repeat's value where it differs) and Nsight Compute's executions of every
global-memory, shared-memory and barrier SASS instruction. The pages are read by
../../../lab_common/ncu_pages.py.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
import ncu_pages as pages  # noqa: E402

KEEP = re.compile(r"shared|lsu|misc|inst_executed|pipe")
CHUNK = 28  # lab/run.sh's first pass: launches a report
INSTR = re.compile(r"^(LDS|STS|LD|ST|ATOM|ATOMS|QSPC|BAR|BRA|EXIT)\b")
COLUMNS = "^Instructions Executed|^Thread Instructions Executed|Wavefronts Shared"


def main():
    lab = {"KEEP": KEEP, "INSTR": INSTR, "COLUMNS": COLUMNS, "CHUNK": CHUNK}
    pages.chunked_lab(
        __file__,
        lab,
        "ncu --clock-control none --metrics <shared, lsu, misc, inst_executed> "
        "--section SourceCounters (28 launches a report); the counters again without "
        "SourceCounters (repeat_differs: where the two differ)",
    )


if __name__ == "__main__":
    main()
