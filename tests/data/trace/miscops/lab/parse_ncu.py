"""Turn the op_misc lab's results (lab/run.sh: raw_all_K.csv, raw_repeat_K.csv and
source_K.csv for the chunk of launches that starts at K) into ../measured.json.

Usage: python3 parse_ncu.py RESULTS_DIR [RESULTS_DIR2 ...] (the rounds, in order). Per
launch: every counter of the run whose name speaks of shared memory, distributed shared
memory, barriers, fences or instructions (as measured, with the repeat's value where it
differs), and Nsight Compute's executions of every SASS instruction that touches shared
memory or synchronises (where the source pass ran). The pages are read by
../../../lab_common/ncu_pages.py.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
import ncu_pages as pages  # noqa: E402

HERE, man = pages.lab_folder(__file__)
KEEP = re.compile(
    r"shared|dsmem|cga|cluster|generic|global|tma|lsu_wavefronts|arbitration|misc|membar|sync|barrier|fence|inst_executed"
)
CHUNK = 30  # lab/run.sh's source pass: launches a report
INSTR = re.compile(
    r"^(LDS|STS|ATOMS|LD|ST|ATOM|RED|QSPC|SYNCS|BAR|MEMBAR|FENCE|ERRBAR|CGAERRBAR|UCGABAR_\w+|CCTL|ELECT"
    r"|WARPSYNC|NANOSLEEP|DEPBAR|VOTE|EXIT)\b"
)
COLUMNS = "^Instructions Executed|^Thread Instructions Executed"


def main():
    dirs = [Path(a) for a in sys.argv[1:]]
    src = dirs[0]
    first_pass, repeat = {}, {}
    for d in dirs:  # the rounds, in order: a launch's first measurement is its first pass
        for stem in ("raw_all", "raw_repeat"):
            for j, row in pages.raw_all(d, stem).items():
                (repeat if j in first_pass else first_pass).setdefault(j, row)
    tables = pages.tables_by_launch(src, "source", man, CHUNK)
    result = pages.launch_entries(man, first_pass, repeat, tables, KEEP, INSTR, COLUMNS)
    pages.write_measured(
        HERE,
        src,
        "ncu --clock-control none --metrics <shared, dshared, misc, barriers> "
        "(60 launches a report), twice (repeat_differs: where the two differ); then "
        "--section SourceCounters (30 launches a report) for the executions",
        result,
    )
    print("launches", len(result), "of", len(man))


if __name__ == "__main__":
    main()
