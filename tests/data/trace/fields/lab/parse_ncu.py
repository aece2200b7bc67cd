"""Turn the view kernel's lab results (lab/run.sh: raw_all_0.csv, source_all_0.csv,
raw_repeat_0.csv, outputs/) into ../measured.json and ../outputs/.

Usage: python3 parse_ncu.py RESULTS_DIR. Per launch: every counter of the run whose name
speaks of shared memory, generic or global accesses (with the repeat's value where it
differs), and Nsight Compute's source counters of every memory SASS instruction (executions
and the shared wavefronts). The pages are read by ../../../lab_common/ncu_pages.py.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
import ncu_pages as pages  # noqa: E402

KEEP = re.compile(r"shared|generic|global|lsu_wavefronts|arbitration")
CHUNK = 1 << 20  # lab/run.sh profiles every launch in one report
INSTR = re.compile(r"^(LDS|STS|LDG|STG|LD|ST)\b")
COLUMNS = "Wavefronts Shared|^Instructions Executed"


def main():
    lab = {"KEEP": KEEP, "INSTR": INSTR, "COLUMNS": COLUMNS, "CHUNK": CHUNK}
    pages.chunked_lab(
        __file__,
        lab,
        "ncu --clock-control none --metrics <shared, generic, global> --section "
        "SourceCounters (one report); the counters again without SourceCounters "
        "(repeat_differs: where the two differ)",
        shown={"_Z12view_reverse4ViewPf": "view_reverse(View, float *)"},
    )


if __name__ == "__main__":
    main()
