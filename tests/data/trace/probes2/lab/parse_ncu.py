"""Turn probe lab 2's results (lab/run.sh's $OUT/probes2: raw_all_K.csv, source_all_K.csv
and raw_repeat_K.csv for the chunk of generic-atomic launches that starts at K, outputs/)
into ../measured.json and ../outputs/.

Usage: python3 parse_ncu.py RESULTS_DIR. Per generic-atomic launch: every counter of the run
whose name speaks of shared, generic, global or local accesses, atomics or the LSU pipe's
wavefronts (with the repeat's values where they differ), and Nsight Compute's source
counters of every LDS, STS, ATOMS and generic LD, ST, ATOM and RED instruction (executions
and every wavefront or request column). The pages are read by
../../../lab_common/ncu_pages.py. The buffers of every launch go to ../outputs/ (those that
differed between the two runs, ``*.bin.repeat``, stay behind: compare.txt names them).
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
import ncu_pages as pages  # noqa: E402

INSTR = re.compile(r"^(LDS|STS|ATOMS|LD|ST|ATOM|RED|QSPC)\b")


def main():
    lab = dict(pages.LSU_LAB, INSTR=INSTR)
    pages.chunked_lab(
        __file__,
        lab,
        pages.LSU_PROFILER,
        select=lambda lid: lid.startswith("gatom_"),
    )


if __name__ == "__main__":
    main()
