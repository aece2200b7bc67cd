"""Turn one run of run.sh (its lab.tgz, unpacked) into this folder's data.

Usage: parse.py RUN_DIR tests/data/triton/jit36. Copies each cache entry Triton wrote (its
cubin, metadata, TTGIR, PTX and group file; not the launcher modules) into cache_abi7/ and
cache_abi8/, and writes launches.json (per launch: the entry of each run, the grid, the
scalars and the host-side descriptors as shmem's --arg takes them), measured.json (per run
and launch: Nsight Compute's per-op counters and per shared-memory SASS instruction its
source counters) and ncu/<abi>_<id>.csv (each launch's table of the source page).
"""

import csv
import io
import json
import shutil
import sys
from pathlib import Path

src, data = Path(sys.argv[1]), Path(sys.argv[2])
sys.path.insert(0, str(data / "lab"))
from launches import LAUNCHES  # noqa: E402

KEEP = (".cubin", ".json", ".ttgir", ".ptx")
SHARED = ("LDS", "STS", "ATOMS", "LDSM", "STSM", "LDGSTS")


def num(s: str) -> int | None:
    return int(float(s.replace(",", ""))) if s not in ("", "-", "n/a") else None


def entries(cache: Path) -> dict[str, Path]:
    """hash -> entry folder."""
    out = {}
    for meta in cache.glob("*/*.json"):
        if meta.name.startswith("__grp__"):
            continue
        out[json.loads(meta.read_text())["hash"]] = meta.parent
    return out


launches = {ident: {"id": ident} for ident in LAUNCHES}
measured = {}
(data / "ncu").mkdir(exist_ok=True)
for abi in ("abi7", "abi8"):
    run = json.loads((src / f"{abi}.json").read_text())
    found = entries(src / f"cache{abi[-1]}")
    dest = data / f"cache_{abi}"
    shutil.rmtree(dest, ignore_errors=True)
    rows = list(csv.reader((src / f"{abi}.raw.csv").read_text().splitlines()))
    head, body = rows[0], rows[2:]
    chunks, cur = [], None
    for line in (src / f"{abi}.source.csv").read_text().splitlines(keepends=True):
        if line.startswith('"Kernel Name"'):
            cur = [line]
            chunks.append(cur)
        elif cur is not None:
            cur.append(line)
    assert len(body) == len(chunks) == len(run["runs"]), (len(body), len(chunks))
    out = []
    for r, chunk, done in zip(body, chunks, run["runs"], strict=True):
        ident = done["id"]
        folder = found[done["hash"]]
        (dest / folder.name).mkdir(parents=True)
        for f in folder.iterdir():
            if f.suffix in KEEP:
                shutil.copyfile(f, dest / folder.name / f.name)
        name, consts, opts, grid, scalars, tensors = LAUNCHES[ident]
        L = launches[ident]
        L.update(kernel=name, constexprs=consts, **opts, grid=list(grid) + [1] * (3 - len(grid)))
        L["args"] = dict(scalars)
        descs = {p: t for p, t in tensors.items() if len(t) == 3}
        if descs:
            L["tensordesc"] = {
                p: "tensordesc:shape={},strides={}".format(
                    "x".join(map(str, t[1])), "x".join(map(str, (t[1][1], 1)))
                )
                for p, t in descs.items()
            }
        L[f"entry_{abi}"] = f"cache_{abi}/{folder.name}"
        (data / "ncu" / f"{abi}_{ident}.csv").write_text("".join(chunk))
        table = list(csv.reader(io.StringIO("".join(chunk))))
        cols, lines = table[1], table[2:]
        base = int(lines[0][0], 16)
        insts = []
        for row in lines:
            sass = row[1].strip()
            words = sass.split()
            op = words[1] if words[0].startswith("@") else words[0]
            if op.split(".")[0] not in SHARED:
                continue
            g = lambda n, row=row, cols=cols: num(row[cols.index(n)])  # noqa: E731
            insts.append(
                {
                    "pc": int(row[0], 16) - base,
                    "sass": sass,
                    "executed": g("Instructions Executed"),
                    "wavefronts": g("L1 Wavefronts Shared"),
                    "ideal": g("L1 Wavefronts Shared Ideal"),
                }
            )
        m = lambda n, r=r, head=head: num(r[head.index(n)])  # noqa: E731
        per_op = {}
        for op in ("ld", "st", "atom"):
            per_op[op] = {
                "requests": m(f"smsp__sass_inst_executed_op_shared_{op}.sum"),
                "wavefronts": m(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum"),
            }
        total = m("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum")
        parts = {
            op: m(f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum")
            for op in ("ld", "st", "atom", "misc", "gmma", "ipa")
        }
        per_op["ldsm"] = {"requests": m("smsp__sass_inst_executed_op_ldsm.sum")}
        per_op["stsm"] = {"requests": m("smsp__sass_inst_executed_op_shared_stsm.sum")}
        per_op["ldgsts"] = {
            "requests": m("smsp__sass_inst_executed_op_ldgsts.sum"),
            "wavefronts": total - sum(parts.values()),
        }
        out.append(
            {
                "id": ident,
                "ncu_kernel_name": r[head.index("Kernel Name")],
                "per_op": per_op,
                "gmma_wavefronts": parts["gmma"],
                "arbitration": m("l1tex__data_bank_conflicts_type_arbitration.sum"),
                "instructions": insts,
            }
        )
    measured[abi] = out
gpu = [x.strip() for x in (src / "gpu.txt").read_text().split("\n") if x.strip()]
doc = {
    "gpu": "NVIDIA H200 (sm_90), " + " / ".join(gpu),
    "profiler": "ncu --clock-control none --metrics <shared counters> --section SourceCounters",
    "runs": measured,
}
(data / "measured.json").write_text(json.dumps(doc, indent=1) + "\n")
(data / "launches.json").write_text(
    json.dumps({"triton": "3.6.0", "launches": list(launches.values())}, indent=1) + "\n"
)
print("ok", {k: len(v) for k, v in measured.items()})
