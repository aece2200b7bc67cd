"""Here, after a run: each distinct launch of RESULTS_DIR (run.sh's archive, unpacked) traced
with its grid, the scalars it was called with and its small integer tensors (index tensors, a
FlexAttention block mask: ints/*.npy), against Nsight Compute's per-op counters and each
shared-memory SASS instruction's source counters.

Usage: PYTHONPATH=. python3 tests/data/triton/inductor36/lab/compare.py RESULTS_DIR"""

import csv
import json
import sys
from pathlib import Path

from shmem_cli.trace.pipeline import TraceRequest, arg_texts, trace_file

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "lab_common"))
from one_run import SHARED_REQUESTS, page_tables  # noqa: E402

WAVES = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_"
REQUESTS = {op: m for op, m in SHARED_REQUESTS.items() if op != "gmma"}


def num(s: str) -> int:
    try:
        return int(float(s.replace(",", "")))
    except ValueError:
        return 0


def source_rows(table: list[list[str]]) -> dict[int, tuple[str, int]]:
    """pc from the kernel's start -> (SASS, L1 shared wavefronts), rows with wavefronts."""
    hi = next(i for i, x in enumerate(table) if x and x[0] == "Address")
    cols = table[hi]
    if "L1 Wavefronts Shared" not in cols:
        return {}
    a, s, w = (cols.index(c) for c in ("Address", "Source", "L1 Wavefronts Shared"))
    out, base = {}, None
    for x in table[hi + 1 :]:
        if len(x) > w and x[a].startswith("0x"):
            pc = int(x[a], 16)
            base = pc if base is None else base
            if num(x[w]):
                out[pc - base] = (x[s].strip(), num(x[w]))
    return out


def main(w: Path) -> None:
    entries = {}
    for meta in w.rglob("*.json"):
        try:
            d = json.loads(meta.read_text())
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(d, dict) and "hash" in d and list(meta.parent.glob("*.cubin")):
            entries.setdefault(d["hash"], meta.parent)
    launches = json.loads((w / "run1.json").read_text())["launches"]
    rows = list(csv.reader((w / "run1.raw.csv").read_text().splitlines()))
    head, body = rows[0], rows[2:]
    tables = page_tables(w / "run1.source.csv")
    assert len(body) == len(launches) == len(tables)
    seen = set()
    for launch, row, table in zip(launches, body, tables, strict=True):
        d = dict(zip(head, row, strict=False))
        assert d["Kernel Name"].startswith(launch["name"])
        key = (launch["hash"], tuple(launch["grid"]), json.dumps(launch["args"]))
        if key in seen:
            continue
        seen.add(key)
        texts = {
            a[0]: str(a[3])
            for a in launch["args"]
            if a[2] == "scalar" and a[1] != "constexpr" and a[3] not in (None, 1)
        }
        for a in launch["args"]:
            if a[2] == "tensor" and len(a) > 6 and (w / "ints" / a[6]).exists():
                texts[a[0]] = "@" + str(w / "ints" / a[6])
        request = TraceRequest(
            entries[launch["hash"]], grid=tuple(launch["grid"]), args=arg_texts(texts)
        )
        k = trace_file(request).kernels[0]
        t = k.totals
        got = {
            "ld": (t["load"].requests, t["load"].wavefronts + t["ldmatrix"].wavefronts),
            "st": (t["store"].requests, t["store"].wavefronts + t["stmatrix"].wavefronts),
            "atom": (t["atomic"].requests, t["atomic"].wavefronts),
            "ldsm": t["ldmatrix"].requests,
            "stsm": t["stmatrix"].requests,
            "ldgsts": t["cp_async"].requests,
            "gmma": t["wgmma"].wavefronts,
        }
        want: dict[str, object] = {
            op: (num(d.get(m + ".sum", "")), num(d.get(WAVES + op + ".sum", "")))
            if op in ("ld", "st", "atom")
            else num(d.get(m + ".sum", ""))
            for op, m in REQUESTS.items()
        }
        want["gmma"] = num(d.get(WAVES + "gmma.sum", ""))
        per_op = {op: (got[op], want[op]) for op in got if got[op] != want[op]}
        mine = {a.site.pc: a.cost.wavefronts for a in k.accesses}
        theirs = source_rows(table)
        rows_off = [
            (hex(pc), sass[:40], wf, mine.get(pc))
            for pc, (sass, wf) in theirs.items()
            if "LDGSTS" not in sass and mine.get(pc) != wf
        ]
        rows_off += [
            (hex(a.site.pc), a.site.sass[:40], 0, a.cost.wavefronts)
            for a in k.accesses
            if a.cost.wavefronts and a.site.pc not in theirs and "LDGSTS" not in a.site.sass
        ]
        print(
            launch["seq"],
            launch["work"],
            launch["name"][:48],
            "per-op exact" if not per_op else f"per-op {per_op}",
            f"rows {len(theirs) - len(rows_off)}/{len(theirs)}",
            rows_off[:3] if rows_off else "",
            flush=True,
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
