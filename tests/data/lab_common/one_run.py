"""One launch profiled alone (``ncu ... -o REP``, then ``--page raw --csv`` and ``--page source
--csv --print-source sass`` of it): its ``.sum`` counters and the source counters of the SASS
instructions a pattern picks, as the labs of one kernel write them into their measured files
(tests/data/triton/sweep16, tests/data/trace/fa2style)."""

import csv
from pathlib import Path

#: Nsight Compute's per-op request counters of shared memory, by the per-op table's names
#: (the Triton labs' parse and compare scripts read these)
SHARED_REQUESTS = {
    "ld": "smsp__sass_inst_executed_op_shared_ld",
    "st": "smsp__sass_inst_executed_op_shared_st",
    "atom": "smsp__sass_inst_executed_op_shared_atom",
    "ldsm": "smsp__sass_inst_executed_op_ldsm",
    "stsm": "smsp__sass_inst_executed_op_shared_stsm",
    "ldgsts": "smsp__sass_inst_executed_op_ldgsts",
    "gmma": "smsp__sass_inst_executed_op_shared_gmma",
}


def page_tables(path):
    """The source page's table of each profiled launch, in order (``ncu -i REP --page source
    --csv --print-source sass`` of several launches): each a list of CSV rows."""
    out, chunks = [], []
    for line in Path(path).read_text().splitlines(keepends=True):
        if line.startswith('"Kernel Name"'):
            out = [line]
            chunks.append(out)
        elif chunks:
            out.append(line)
    return [list(csv.reader(c)) for c in chunks]


def number(text):
    """A figure as Nsight prints it (``1,408``, empty for none)."""
    return float(text.replace(",", "") or 0)


def one_run(raw, source, pattern):
    """{"counters": each ``.sum`` counter of the raw page ``raw``, "instructions": per SASS
    instruction of the source page ``source`` that ``pattern`` matches and that ran: its
    offset in the kernel, SASS, executions, wavefronts, ideal}."""
    rows = list(csv.reader(Path(raw).read_text().splitlines()))
    head, values = rows[0], rows[2]
    counters = {
        k.removesuffix(".sum"): number(v)
        for k, v in zip(head, values, strict=False)
        if k.endswith(".sum") and v
    }
    cols, table = None, []
    for row in csv.reader(Path(source).read_text().splitlines()):
        if row and row[0] == "Address":
            cols = row
        elif cols and len(row) == len(cols):
            table.append(dict(zip(cols, row, strict=True)))
    base = min(int(d["Address"], 16) for d in table)
    shared = [
        {
            "pc": int(d["Address"], 16) - base,
            "sass": " ".join(d["Source"].split()),
            "executed": int(number(d["Instructions Executed"])),
            "wavefronts": int(number(d["L1 Wavefronts Shared"])),
            "ideal": int(number(d["L1 Wavefronts Shared Ideal"])),
        }
        for d in table
        if pattern.match(" ".join(d["Source"].split())) and number(d["Instructions Executed"])
    ]
    return {"counters": counters, "instructions": shared}
