"""What the labs' parse scripts share: Nsight Compute's CSV pages as ``ncu -i REP --csv``
writes them (the raw page: a header and a row per profiled launch; the source page: a table
of SASS rows per launch), read into the counters and per-instruction rows a lab keeps in its
measured.json.

The labs run on the H200 by hand, with python3 and the standard library only. Each lab's
``parse_ncu.py`` puts this folder on ``sys.path`` and keeps only what is its own: which
counters and instructions it keeps, how its results are laid out, what it writes.
"""

import csv
import json
import os
import re
import shutil
import sys
from pathlib import Path

#: counters of the device or the launch, never kept
SKIP = re.compile(r"^(device__attribute|launch__)")


def num(s):
    """A cell's count (``1,024``, ``3.0``), None where it holds none (``n/a``, ``-``)."""
    s = s.replace(",", "").strip()
    try:
        return int(float(s))
    except ValueError:
        return None


def raw_rows(path):
    """The raw page's header and its rows, one per profiled launch ([], [] where ncu wrote
    no report: its chunk ran out of time)."""
    if not path.exists():
        return [], []
    rows = [r for r in csv.reader(path.read_text().splitlines()) if r]
    rows = [r for r in rows if not r[0].startswith("==")]
    if not rows:
        return [], []
    head = rows[0]
    kernel = head.index("Kernel Name")
    body = [r for r in rows[1:] if len(r) == len(head) and r[kernel] != ""]
    return head, [r for r in body if not r[kernel].startswith("Kernel")]  # the units row


def chunks(src, stem):
    """The chunk files ``stem_K.csv`` of a pass, in launch order (K: the chunk's first
    launch), as (K, path)."""
    found = sorted(src.glob(f"{stem}_*.csv"), key=lambda p: int(p.stem.rsplit("_", 1)[1]))
    return [(int(p.stem.rsplit("_", 1)[1]), p) for p in found]


def raw_all(src, stem):
    """{launch index: (header, row)} over every chunk of one pass."""
    out = {}
    for first, path in chunks(src, stem):
        head, body = raw_rows(path)
        for j, row in enumerate(body):
            out[first + j] = (head, row)
    return out


def source_tables(path, launches):
    """The source page's tables by kernel name, in launch order. ``launches``: the launches
    the page profiled (manifest entries, each with its ``kernel``). Nsight Compute printed
    the table of each launch of a cluster kernel twice (the two copies are equal), once for
    the others: a name with twice as many tables as launches keeps every second one."""
    tables, cur = [], None
    for r in csv.reader(path.read_text().splitlines() if path.exists() else []):
        if r and r[0] == "Kernel Name":
            cur = {"name": r[1], "rows": []}
            tables.append(cur)
        elif r and r[0] == "Address" and cur is not None:
            cur["cols"] = r
        elif r and cur is not None and "cols" in cur:
            cur["rows"].append(r)
    by_name = {}
    for t in tables:
        by_name.setdefault(t["name"], []).append(t)
    for name, ts in by_name.items():
        if len(ts) == 2 * sum(1 for L in launches if L["kernel"] == name):
            by_name[name] = ts[::2]
    return by_name


def tables_by_launch(src, stem, manifest, size):
    """{launch index: its source table} over the source pages ``stem_K.csv`` of ``src``, each
    holding up to ``size`` launches of ``manifest`` from its first (K), in order."""
    out = {}
    for first, path in chunks(src, stem):
        by_name = source_tables(path, manifest[first : first + size])
        seen = {}
        for j in range(first, min(first + size, len(manifest))):
            name = manifest[j]["kernel"]
            k = seen[name] = seen.get(name, -1) + 1
            if k < len(by_name.get(name, [])):
                out[j] = by_name[name][k]
    return out


def counters(head, row, keep):
    """The launch's counters whose name ``keep`` matches (sums; not the device's or the
    launch's attributes), those that counted anything, without the ``.sum``."""
    out = {}
    for k, v in zip(head, row, strict=False):
        if k.endswith(".sum") and keep.search(k) and not SKIP.search(k) and num(v):
            out[k.removesuffix(".sum")] = num(v)
    return out


def instructions(table, instr, columns):
    """The rows of a source table whose opcode ``instr`` matches: each one's offset from the
    kernel's first instruction, its SASS and its columns: every column whose name the regex
    ``columns`` matches, under its name, or for a dict {column: key}, those under their keys."""
    c = table["cols"]
    if isinstance(columns, str):
        columns = {n: n for n in c if re.search(columns, n)}
    base = int(table["rows"][0][0], 16)
    out = []
    for row in table["rows"]:
        sass = row[1].strip()
        op = sass.split()[1] if sass.startswith("@") else sass.split()[0]
        if not instr.match(op):
            continue
        cells = {key: num(row[c.index(n)]) for n, key in columns.items()}
        out.append({"pc": int(row[0], 16) - base, "sass": sass, **cells})
    return out


def launch_entries(manifest, first_pass, repeat, tables, keep, instr, columns):
    """measured.json's launches: per launch of the manifest its counters (``keep``) from the
    first pass that measured it, ``repeat_differs`` where a second pass read other values,
    and its source table's instructions (``instr``, ``columns``)."""
    result = []
    for j, L in enumerate(manifest):
        if j not in first_pass and j not in repeat:
            print("launch", j, L["id"], "not measured")
            continue
        head, r = first_pass.get(j) or repeat[j]
        if L["kernel"] not in r[head.index("Kernel Name")]:
            print("launch", j, "is", r[head.index("Kernel Name")], "not", L["kernel"])
            continue
        entry = {"id": L["id"], "counters": counters(head, r, keep), "measured_twice": False}
        if j in first_pass and j in repeat:
            again = counters(*repeat[j], keep)
            entry["measured_twice"] = True
            entry["repeat_differs"] = {
                k: v for k, v in again.items() if entry["counters"].get(k) != v
            }
        if j in tables:
            entry["instructions"] = instructions(tables[j], instr, columns)
        result.append(entry)
    return result


def write_measured(here, src, profiler, launches):
    """Write ``here/measured.json``: the GPU and tools (``src/gpu.txt``), how it was
    profiled, the launches."""
    gpu = (src / "gpu.txt").read_text() if (src / "gpu.txt").exists() else ""
    doc = {
        "gpu": " / ".join(x.strip() for x in gpu.splitlines() if x.strip()),
        "profiler": profiler,
        "launches": launches,
    }
    (here / "measured.json").write_text(json.dumps(doc, indent=0) + "\n")


def copy_outputs(here, src):
    """The buffers the launches left (``src/outputs/*.bin``) into ``here/outputs``."""
    outs = src / "outputs"
    if outs.is_dir():
        (here / "outputs").mkdir(exist_ok=True)
        for f in outs.iterdir():
            if f.suffix == ".bin":
                shutil.copy(f, here / "outputs" / f.name)


#: the generic-access labs' (trace/debug_builds, trace/probes2): what their run.sh profiles
#: (ncu_lab.sh's lab_lsu counters, 13 launches a report, then the counters again) and keeps;
#: each names the instructions it keeps (INSTR)
LSU_LAB = {
    "KEEP": re.compile(r"shared|generic|global|local|atom|redas|lsu|arbitration|inst_executed$"),
    "CHUNK": 13,
    "COLUMNS": "Wavefronts Shared|^Instructions Executed|Requests|Sectors",
}
LSU_PROFILER = (
    "ncu --clock-control none --metrics <shared, generic, global, local> "
    "--section SourceCounters (13 launches a report); the counters again without "
    "SourceCounters (repeat_differs: where the two differ)"
)


def lab_folder(script):
    """The data folder of the lab whose script is ``script`` (``__file__``: its lab/ is in
    the folder; ``LAB_DATA`` in the environment names another folder of launches that the
    same script's run.sh measured), and that folder's launches (launches.json)."""
    here = Path(os.environ.get("LAB_DATA") or Path(script).resolve().parent.parent)
    return here, json.loads((here / "launches.json").read_text())["launches"]


def chunked_lab(script, lab, profiler, select=None, shown=None):
    """The whole of a lab's parse_ncu.py whose run.sh profiled its launches in chunks
    (raw_all_K.csv, source_all_K.csv, raw_repeat_K.csv from launch K on, outputs/): reads
    the results folder named on the command line, writes ``measured.json`` and ``outputs/``
    beside the lab. ``lab``: its KEEP, INSTR and COLUMNS patterns and CHUNK (launches a
    report); ``select``: the launches it profiled, where not all (by id); ``shown``: the
    name Nsight Compute prints for a kernel whose manifest name is mangled (C++ kernels)."""
    here, man = lab_folder(script)
    if shown:
        man = [dict(L, kernel=shown.get(L["kernel"], L["kernel"])) for L in man]
    src = Path(sys.argv[1])
    first_pass, repeat = raw_all(src, "raw_all"), raw_all(src, "raw_repeat")
    tables = tables_by_launch(src, "source_all", man, lab["CHUNK"])
    result = launch_entries(
        man, first_pass, repeat, tables, lab["KEEP"], lab["INSTR"], lab["COLUMNS"]
    )
    if select is not None:
        result = [r for r in result if select(r["id"])]
    write_measured(here, src, profiler, result)
    copy_outputs(here, src)
    if (src / "gpu.txt").exists() and (here / "outputs").is_dir():
        shutil.copy(src / "gpu.txt", here / "outputs" / "gpu.txt")
    wanted = sum(1 for L in man if select is None or select(L["id"]))
    print("launches", len(result), "of", wanted)


#: the op_misc labs' counters kept (misc_lab.sh: misc_lab_metrics.txt) and source columns
MISC_LAB = {
    "KEEP": re.compile(r"shared|lsu|misc|inst_executed|pipe"),
    "COLUMNS": "^Instructions Executed|^Thread Instructions Executed|Wavefronts Shared",
    "CHUNK": 28,  # misc_lab.sh's first pass: launches a report
}


def misc_lab(script, instr):
    """The whole of an op_misc lab's parse_ncu.py (misc_lab.sh's results: raw_all_K.csv,
    source_all_K.csv, raw_repeat_K.csv, outputs/): measured.json and outputs/ beside the lab,
    each launch's counters and the executions of the SASS instructions ``instr`` matches."""
    chunked_lab(
        script,
        dict(MISC_LAB, INSTR=instr),
        "ncu --clock-control none --metrics <shared, lsu, misc, inst_executed> "
        "--section SourceCounters (28 launches a report); the counters again without "
        "SourceCounters (repeat_differs: where the two differ)",
    )
