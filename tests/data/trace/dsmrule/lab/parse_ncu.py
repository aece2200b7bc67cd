"""Turn the DSMEM rule lab's results (lab/run.sh: raw_all_K.csv, source_all_K.csv and
raw_repeat_K.csv for the chunk of launches that starts at K, outputs/) into ../measured.json
and ../outputs/.

Usage: python3 parse_ncu.py RESULTS_DIR [ROUND]. With ROUND (``gpu_fourth_round``: run.sh
with FIRST=92 measured one round) the launches RESULTS_DIR holds are added to ../measured.json
(those of earlier rounds kept, the round's GPU under ROUND) and their buffers to ../outputs/.
Per launch: every counter of the run whose name
speaks of shared memory, distributed shared memory or generic and global accesses (as
measured, with the repeat's value where it differs), and Nsight Compute's source counters of
every memory SASS instruction (executions and every wavefront or request column). The pages
are read by ../../../lab_common/ncu_pages.py.
"""

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
import ncu_pages as pages  # noqa: E402

KEEP = re.compile(r"shared|dsmem|cga|cluster|generic|global|tma|lsu_wavefronts|arbitration")
CHUNK = 16  # lab/run.sh's first pass: launches a report
INSTR = re.compile(r"^(LDS|STS|ATOMS|LD|ST|ATOM|RED|QSPC)\b")
COLUMNS = "Wavefronts Shared|^Instructions Executed"


def append_round(key):
    """Add the launches of one round (those the results hold) to measured.json, as the
    second and third rounds were: the earlier launches kept, the round's GPU under ``key``."""
    here, man = pages.lab_folder(__file__)
    src = Path(sys.argv[1])
    doc = json.loads((here / "measured.json").read_text())
    assert key not in doc, f"measured.json already holds {key}"
    first_pass, repeat = pages.raw_all(src, "raw_all"), pages.raw_all(src, "raw_repeat")
    tables = pages.tables_by_launch(src, "source_all", man, CHUNK)
    first = min([*first_pass, *repeat], default=len(man))  # the round's first launch

    def shift(by_launch):  # launch indices from the round's first
        return {j - first: v for j, v in by_launch.items()}

    new = pages.launch_entries(
        man[first:], shift(first_pass), shift(repeat), shift(tables), KEEP, INSTR, COLUMNS
    )
    old = {m["id"] for m in doc["launches"]}
    assert not old & {m["id"] for m in new}, "these launches are measured already"
    doc["launches"] += new
    gpu = (src / "gpu.txt").read_text() if (src / "gpu.txt").exists() else ""
    doc[key] = " / ".join(x.strip() for x in gpu.splitlines() if x.strip())
    (here / "measured.json").write_text(json.dumps(doc, indent=0) + "\n")
    pages.copy_outputs(here, src)
    print("launches", len(new), "added under", key)


def main():
    if len(sys.argv) > 2:
        append_round(sys.argv[2])
        return
    lab = {"KEEP": KEEP, "INSTR": INSTR, "COLUMNS": COLUMNS, "CHUNK": CHUNK}
    pages.chunked_lab(
        __file__,
        lab,
        "ncu --clock-control none --metrics <shared, dshared, generic> "
        "--section SourceCounters (16 launches a report); the counters again without "
        "SourceCounters (repeat_differs: where the two differ)",
    )


if __name__ == "__main__":
    main()
