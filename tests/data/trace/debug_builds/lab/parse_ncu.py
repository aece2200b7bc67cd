"""Turn the debug-build lab's results (lab/run.sh: raw_all_K.csv, source_all_K.csv and
raw_repeat_K.csv for the chunk of launches that starts at K, outputs/) into ../measured.json
and ../outputs/.

Usage: python3 parse_ncu.py RESULTS_DIR. Per launch: every counter of the run whose name
speaks of shared, generic, global or local accesses, atomics or the LSU pipe's wavefronts
(with the repeat's values where they differ), and Nsight Compute's source counters of every
LDS, STS, ATOMS and generic LD, ST, ATOM and RED instruction (executions and every wavefront
or request column). The pages are read by ../../../lab_common/ncu_pages.py.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
import ncu_pages as pages  # noqa: E402

INSTR = re.compile(r"^(LDS|STS|ATOMS|LD|ST|ATOM|RED)\b")


def main():
    lab = dict(pages.LSU_LAB, INSTR=INSTR)
    pages.chunked_lab(__file__, lab, pages.LSU_PROFILER)


if __name__ == "__main__":
    main()
