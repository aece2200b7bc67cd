"""Turn the cluster lab's results (.lab/grids/run.sh: raw_all.csv, source_all.csv,
raw_repeat.csv, outputs/) into ../measured.json and ../outputs/.

Usage: python3 parse_ncu.py RESULTS_DIR. Per launch: every counter of the run whose name
speaks of shared memory, distributed shared memory or generic and global accesses (as
measured, with the repeat's value where it differs), and Nsight Compute's source counters of
every memory SASS instruction (executions and every wavefront or request column). The pages
are read by ../../../lab_common/ncu_pages.py.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
import ncu_pages as pages  # noqa: E402

HERE, man = pages.lab_folder(__file__)
KEEP = re.compile(r"shared|dsmem|cga|cluster|generic|global|tma|lsu_wavefronts|arbitration")
INSTR = re.compile(r"^(LDS|STS|ATOMS|LD|ST|ATOM|RED|UTMA\w*|SYNCS)\b")
COLUMNS = "Wavefronts Shared|^Instructions Executed"


def main():
    src = Path(sys.argv[1])
    head, body = pages.raw_rows(src / "raw_all.csv")
    head2, body2 = pages.raw_rows(src / "raw_repeat.csv")
    tables = pages.source_tables(src / "source_all.csv", man)
    seen = {}
    kernel = head.index("Kernel Name") if head else 0
    result = []
    for j, (L, r) in enumerate(zip(man, body, strict=False)):
        if L["kernel"] not in r[kernel]:
            print("launch", j, "is", r[kernel], "not", L["kernel"])
            break
        entry = {"id": L["id"], "counters": pages.counters(head, r, KEEP)}
        if j < len(body2):
            again = pages.counters(head2, body2[j], KEEP)
            entry["repeat_differs"] = {
                k: v for k, v in again.items() if entry["counters"].get(k) != v
            }
        k = seen[L["kernel"]] = seen.get(L["kernel"], -1) + 1
        if k < len(tables.get(L["kernel"], [])):
            entry["instructions"] = pages.instructions(tables[L["kernel"]][k], INSTR, COLUMNS)
        result.append(entry)
    pages.write_measured(
        HERE,
        src,
        "ncu --clock-control none --metrics <shared, dshared, generic> "
        "--section SourceCounters; the counters measured twice (repeat_differs)",
        result,
    )
    pages.copy_outputs(HERE, src)
    print("launches", len(result), "of", len(man))


if __name__ == "__main__":
    main()
