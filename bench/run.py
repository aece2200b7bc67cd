"""shmem performance figures, all measured in one run: ``make bench`` or ``python bench/run.py``.

Prints one table (each figure, its target, the ratio, pass or fail) and writes
every number to bench/results.json. The method, and the figures of the
development machine, are in docs/performance.md.

Options: ``--repeats N`` (default 5) repeats of every timed process;
``--quick`` for a fast smoke run (2 repeats, no scaling table); ``--json PATH``;
``--markdown PATH`` to also write the tables in Markdown; ``--strict`` to exit 1
when a figure misses its target.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from evaluate import deferred_evaluation
from hostile import hostile
from measure import ROOT, Timing, peak_rss_mb, run_process, shmem_command, time_call, time_processes
from one_warp import one_warp
from specgen import lint_corpus, scaling_spec
from watch import heavy_watch

sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import shmem_cli  # noqa: E402
from shmem_cli.analysis.analyze import analyze_spec  # noqa: E402
from shmem_cli.spec.compile import load_spec, spec_from_mapping  # noqa: E402
from shmem_cli.spec.space import MAX_LANE_ACCESSES  # noqa: E402

SPECS = ROOT / "bench" / "specs"
THROUGHPUT = SPECS / "throughput.yaml"
LINT_FILES = 500
MALLOC_TUNED = ["MALLOC_MMAP_THRESHOLD_=67108864", "MALLOC_TRIM_THRESHOLD_=134217728"]


class Report:
    """The rows of the summary table and everything else that goes into the JSON file."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.details: dict[str, Any] = {}

    def row(
        self,
        figure: str,
        measured: str,
        target: str,
        ratio: float | None,
        ok: bool | None,
        note: str = "",
    ) -> None:
        status = "n/a" if ok is None else ("pass" if ok else "FAIL")
        self.rows.append(
            {
                "figure": figure,
                "measured": measured,
                "target": target,
                "ratio": None if ratio is None else round(ratio, 3),
                "result": status,
                "note": note,
            }
        )
        ratio_text = "" if ratio is None else f"{ratio:.2f}x"
        print(
            f"  {status:4}  {figure}: {measured}  [target {target}] {ratio_text} {note}".rstrip(),
            flush=True,
        )

    def markdown(self) -> str:
        """The summary and the scaling series as Markdown tables (for docs/performance.md)."""
        lines = ["| figure | measured | target | ratio | result |", "|---|---|---|---|---|"]
        for r in self.rows:
            ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}x"
            lines.append(
                f"| {r['figure']} | {r['measured']} | {r['target']} | {ratio} | {r['result']} |"
            )
        scaling = self.details.get("scaling")
        if scaling:
            lines += [
                "",
                "| varied | threads | iterations | accesses | lane-accesses | time "
                "| ns per lane-access |",
            ]
            lines.append("|---|---|---|---|---|---|---|")
            for row in scaling:
                varied = f"width: {row['patterns'][0]}" if row["vary"] == "width" else row["vary"]
                lines.append(
                    f"| {varied} | {row['threads']} | {row['iterations']} | {row['accesses']} | "
                    f"{row['lane_accesses']:,} | {row['seconds'] * 1000:.2f} ms | "
                    f"{row['ns_per_lane_access']:.1f} |"
                )
        return "\n".join(lines) + "\n"

    def table(self) -> str:
        head = ("figure", "measured", "target", "ratio", "result")
        body = [
            (
                r["figure"],
                r["measured"],
                r["target"],
                "" if r["ratio"] is None else f"{r['ratio']:.2f}x",
                r["result"],
            )
            for r in self.rows
        ]
        widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head))]
        lines = [
            "  ".join(str(c).ljust(w) for c, w in zip(x, widths, strict=True))
            for x in [head, *body]
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)


def mb(x: float) -> str:
    return f"{x:.0f} MB"


def ms(x: float) -> str:
    return f"{x * 1000:.0f} ms"


def command_exists(shmem: list[str], name: str) -> bool:
    return run_process([*shmem, name, "--help"]).returncode == 0


# --- the figures ---------------------------------------------------------------------------


def throughput(report: Report, shmem: list[str], repeats: int) -> float:
    """shmem analyze on the 25M lane-access spec against the hand-written NumPy floor."""
    print(
        "throughput: shmem analyze vs the NumPy floor (bench/floor.py), whole processes", flush=True
    )
    totals = json.loads(run_process([*shmem, "analyze", str(THROUGHPUT), "-f", "json"]).stdout)
    shmem_wavefronts = [a["wavefronts"] for a in totals["files"][0]["accesses"]]
    lanes = sum(a["lane_accesses"] for a in totals["files"][0]["accesses"])
    floor_out = json.loads(run_process([sys.executable, str(ROOT / "bench" / "floor.py")]).stdout)
    same = floor_out["wavefronts"] == shmem_wavefronts and floor_out["lane_accesses"] == lanes
    floor = [sys.executable, str(ROOT / "bench" / "floor.py")]
    t = time_processes(
        {
            "floor": floor,
            "shmem": [*shmem, "analyze", str(THROUGHPUT)],
            # the floor again, with the allocator setting shmem makes for itself (space.py)
            "floor_tuned_malloc": ["env", *MALLOC_TUNED, *floor],
        },
        repeats,
    )
    ratio = t["shmem"].best / t["floor"].best
    rate = lanes / t["shmem"].best
    report.row(
        "throughput: shmem analyze, 25M lane-accesses (whole process)",
        f"{t['shmem'].best:.2f} s, {rate / 1e6:.0f}M lane-accesses/s",
        f"<= 1.5x NumPy floor ({t['floor'].best:.2f} s)",
        ratio,
        ratio <= 1.5 and same,
        "" if same else "TOTALS DIFFER from the floor",
    )
    # the engine alone, in this process: no start-up, no output
    spec = load_spec(THROUGHPUT)
    engine_s = time_call(lambda: analyze_spec(spec, detail=False), max(1, repeats // 2))
    report.details["throughput"] = {
        "spec": str(THROUGHPUT.relative_to(ROOT)),
        "lane_accesses": lanes,
        "wavefronts": shmem_wavefronts,
        "floor_wavefronts": floor_out["wavefronts"],
        "totals_equal": same,
        "shmem": t["shmem"].summary(),
        "floor": t["floor"].summary(),
        "floor_tuned_malloc": t["floor_tuned_malloc"].summary(),
        "ratio_to_floor": round(ratio, 3),
        "ratio_to_floor_tuned_malloc": round(t["shmem"].best / t["floor_tuned_malloc"].best, 3),
        "lane_accesses_per_s_process": round(rate),
        "in_process_analysis_s": round(engine_s, 4),
        "lane_accesses_per_s_in_process": round(lanes / engine_s),
    }
    print(
        f"        floor with shmem's allocator setting: {t['floor_tuned_malloc'].best:.2f} s "
        f"(shmem {t['shmem'].best / t['floor_tuned_malloc'].best:.2f}x of it)\n"
        f"        in process (no start-up, no output): {engine_s:.3f} s, "
        f"{lanes / engine_s / 1e6:.0f}M lane-accesses/s"
    )
    return lanes / engine_s


def reference(report: Report, engine_rate: float) -> None:
    """The engine against the plain-Python reference model of the tests, per lane-access."""
    from tests.reference import reference_analyze

    print(
        "reference: plain-Python model (tests/reference.py) on the same spec, 32 iterations",
        flush=True,
    )
    data = json.loads(json.dumps(_yaml(THROUGHPUT)))
    for acc in data["accesses"]:
        acc["loop"] = {"k": "0..31"}
    spec = spec_from_mapping(data)
    lanes = 3 * 1024 * 32
    start = time.perf_counter()
    ref = reference_analyze(spec)
    ref_s = time.perf_counter() - start
    ours = analyze_spec(spec, detail=False)
    same = [(r.requests, r.wavefronts, r.ideal, r.max_ways) for r in ref] == [
        (a.requests, a.wavefronts, a.ideal_wavefronts, a.max_ways) for a in ours.accesses
    ]
    ref_rate = lanes / ref_s
    ratio = engine_rate / ref_rate
    report.row(
        "engine vs reference model (lane-accesses/s)",
        f"{engine_rate / 1e6:.0f}M/s vs {ref_rate / 1e3:.0f}k/s",
        ">= 100x",
        ratio,
        ratio >= 100 and same,
        "" if same else "TOTALS DIFFER from the reference",
    )
    report.details["reference"] = {
        "lane_accesses": lanes,
        "reference_s": round(ref_s, 4),
        "reference_lane_accesses_per_s": round(ref_rate),
        "engine_lane_accesses_per_s": round(engine_rate),
        "speedup": round(ratio, 1),
        "totals_equal": same,
    }


NUMPY_ONLY = "python -c 'import numpy'"


def memory(report: Report, shmem: list[str]) -> None:
    """Peak memory of analyze as the iteration space grows, and the refusal of a too-large one."""
    print("memory: peak RSS of shmem analyze; refusal of a spec over the limit", flush=True)
    sizes = {
        "one.yaml (1 request)": SPECS / "one.yaml",
        "throughput.yaml (25M lane-accesses)": THROUGHPUT,
        "memory.yaml (134M lane-accesses)": SPECS / "memory.yaml",
    }
    peaks = {}
    for label, path in sizes.items():
        peaks[label], run = peak_rss_mb([*shmem, "analyze", str(path)])
        assert run.returncode == 0, run.stdout
    peaks[NUMPY_ONLY] = peak_rss_mb([sys.executable, "-c", "import numpy"])[0]
    worst = max(peaks.values())
    report.row(
        "peak RSS of analyze (134M lane-accesses)",
        mb(peaks["memory.yaml (134M lane-accesses)"]),
        "< 500 MB",
        None,
        worst < 500,
        f"(1 request: {mb(peaks['one.yaml (1 request)'])}, "
        f"25M: {mb(peaks['throughput.yaml (25M lane-accesses)'])}"
        f", import numpy alone: {mb(peaks[NUMPY_ONLY])})",
    )
    refused = Timing()
    for _ in range(3):
        run = run_process([*shmem, "analyze", str(SPECS / "refused.yaml")])
        refused.add(run)
    message_ok = run.returncode == 2 and "the limit is" in run.stdout
    report.row(
        f"refusal of > {MAX_LANE_ACCESSES} lane-accesses",
        f"exit {run.returncode} after {ms(refused.best)}",
        "exit 2 at once (< 1 s)",
        None,
        message_ok and refused.best < 1.0,
    )
    report.details["memory"] = {
        "peak_rss_mb": {k: round(v, 1) for k, v in peaks.items()},
        "refused": {
            **refused.summary(),
            "returncode": run.returncode,
            "message": run.stdout.strip()[:300],
        },
    }


def startup(report: Report, shmem: list[str], repeats: int) -> None:
    """Start-up against what the CLI cannot do without: ``import numpy, click, yaml`` (its
    dependency floor, the target) and ``import numpy`` alone (shown, as it was the target
    until 2026-12-05: the floor alone is about 1.26x of it, so 1.3x left shmem itself 3 to
    5 ms; docs/performance.md)."""
    print("start-up: against python -c 'import numpy, click, yaml'", flush=True)
    t = time_processes(
        {
            "numpy": [sys.executable, "-c", "import numpy"],
            "floor": [sys.executable, "-c", "import numpy, click, yaml"],
            "version": [*shmem, "--version"],
            "analyze": [*shmem, "analyze", str(SPECS / "one.yaml")],
            "analyze_json": [*shmem, "analyze", str(SPECS / "one.yaml"), "-f", "json"],
        },
        max(repeats * 3, 5),
    )
    floor, numpy = t["floor"].best, t["numpy"].best
    target = f"<= 1.3x import numpy, click, yaml ({ms(floor)})"
    shown = f"(for comparison: import numpy {ms(numpy)})"
    for key, label, base, said, most in (
        ("version", "shmem --version", floor, target, 1.3),
        ("analyze", "shmem analyze one-access spec", floor, target, 1.3),
        ("analyze_json", "same, -f json, to import numpy", numpy, shown, None),
        ("analyze", "analyze, to import numpy", numpy, shown, None),
    ):
        ratio = t[key].best / base
        passed = None if most is None else ratio <= most
        report.row(f"start-up: {label}", ms(t[key].best), said, ratio, passed)
    report.details["startup"] = {k: v.summary() for k, v in t.items()}
    report.details["startup"]["import_ms"] = import_breakdown()
    print("        imports (python -X importtime, ms):", report.details["startup"]["import_ms"])


# where import time is charged: a module's own time goes to the nearest of these packages
# among it and the modules that imported it (inspect, imported by click, counts as click)
IMPORT_OWNERS = ("numpy", "click", "yaml", "shmem_cli", "rich", "lark", "jsonschema")


def import_breakdown() -> dict[str, float]:
    """Milliseconds of imports in one ``shmem analyze bench/specs/one.yaml`` (text, no
    terminal) by package, as ``python -X importtime`` reports that very run (lazy imports
    included); "python" is the interpreter's own start-up imports (site and what it loads).
    -X importtime itself adds some overhead to every figure."""
    one = str(SPECS / "one.yaml")
    code = (
        "import sys; from shmem_cli.cli import main; "
        f"sys.argv = ['shmem', 'analyze', {one!r}]; main()"
    )
    run = run_process([sys.executable, "-X", "importtime", "-c", code])
    lines = [
        line for line in run.stdout.splitlines() if line.startswith("import time:") and "|" in line
    ]
    out: dict[str, float] = {}
    owner_at_depth: list[str] = []
    # importtime prints a module after the modules it imported, one indent deeper: read backwards
    for line in reversed(lines):
        own, _, name = line[len("import time:") :].split("|")
        if not own.strip().isdigit():
            continue  # the header line
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        package = name.strip().split(".")[0]
        inherited = owner_at_depth[depth - 1] if 0 < depth <= len(owner_at_depth) else "python"
        owner = package if package in IMPORT_OWNERS else inherited
        del owner_at_depth[depth:]
        owner_at_depth.append(owner)
        out[owner] = out.get(owner, 0.0) + int(own) / 1000
    order = ("python", *IMPORT_OWNERS)
    return {k: round(out[k], 1) for k in order if out.get(k, 0.0) >= 0.05}


def lint(report: Report, shmem: list[str], repeats: int) -> None:
    if not command_exists(shmem, "lint"):
        report.row(
            f"lint: {LINT_FILES} specs in one run",
            "not available",
            "< 10 s",
            None,
            None,
            "no shmem lint",
        )
        return
    print(f"lint: {LINT_FILES} specs in one run", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        lint_corpus(Path(tmp), LINT_FILES)
        t = time_processes({"lint": [*shmem, "lint", tmp]}, max(2, repeats // 2))
        last = run_process([*shmem, "lint", tmp, "-f", "json"])
    cores = min(t["lint"].cpus) / t["lint"].best
    report.row(
        f"lint: {LINT_FILES} specs in one run",
        f"{t['lint'].best:.2f} s ({cores:.1f} cores busy)",
        "< 10 s",
        t["lint"].best / 10,
        t["lint"].best < 10 and last.returncode in (0, 1),
        f"{os.cpu_count()} cores on this machine",
    )
    report.details["lint"] = {
        **t["lint"].summary(),
        "files": LINT_FILES,
        "cpu_per_wall": round(cores, 2),
    }


def sweep(report: Report, shmem: list[str], repeats: int) -> None:
    if not command_exists(shmem, "sweep"):
        report.row(
            "sweep: 33 pads x 1024 threads x 256 iterations",
            "not available",
            "<= 5x one analysis",
            None,
            None,
        )
        return
    print("sweep: 33 pads against one analysis of the same spec", flush=True)
    spec = SPECS / "sweep.yaml"
    t = time_processes(
        {
            "analyze": [*shmem, "analyze", str(spec)],
            "sweep": [*shmem, "sweep", str(spec), "--pad", "0..32"],
        },
        repeats,
    )
    ratio = t["sweep"].best / t["analyze"].best
    report.row(
        "sweep: 33 pads x 1024 threads x 256 iterations",
        f"{t['sweep'].best:.2f} s",
        f"<= 5x one analysis ({t['analyze'].best:.2f} s)",
        ratio,
        ratio <= 5,
    )
    report.details["sweep"] = {k: v.summary() for k, v in t.items()}


TRACE_CUBIN = ROOT / "bench" / "kernels" / "trace_bench.sm_90.cubin"
WS_CUBIN = ROOT / "tests" / "data" / "trace" / "hopper" / "ws_gemm.sm_90a.cubin"
BUSY_ITERATIONS = 6200  # busy_loop runs about 10 million thread-instructions with this


def trace(report: Report, shmem: list[str], repeats: int) -> None:
    """shmem trace end to end (start-up, nvdisasm, emulation, engine): an SGEMM block with
    K = 512, and a loop of about 10 million thread-instructions."""
    from shmem_cli.cuda import toolchain

    sgemm = ["-b", "256", "-k", "sgemm_tile", "-a", "M=64", "-a", "N=64", "-a", "K=512"]
    busy = ["-b", "256", "-k", "busy_loop", "-a", f"iters={BUSY_ITERATIONS}"]
    # a 128x128x64 warp-specialized wgmma GEMM mainloop (TMA producer, two consumer
    # warpgroups, 4 mbarrier stages), K = 4096
    tile = "tensormap:dtype=bf16,dims=4096x128,box=64x128,swizzle=128B"
    ws = ["-b", "384", "--dynamic-smem", "197696", "-a", f"0={tile}", "-a", f"1={tile}"]
    ws += ["-a", "2=tensormap:dtype=bf16,dims=128x128,box=128x128", "-a", "3=64"]
    figures = (
        ("trace: 256-thread SGEMM tile, K = 512", 2.0, "sgemm_tile", TRACE_CUBIN, sgemm),
        ("trace: ~10M thread-instructions", 10.0, "busy_loop", TRACE_CUBIN, busy),
        ("trace: warp-specialized wgmma GEMM, K = 4096", 10.0, "ws_gemm", WS_CUBIN, ws),
    )
    if not command_exists(shmem, "trace") or toolchain.which("nvdisasm") is None:
        for figure, target, *_ in figures:
            report.row(figure, "not available", f"< {target:g} s", None, None)
        return
    print("trace: shmem trace of bench/kernels/trace_bench.cu and the Hopper GEMM", flush=True)
    details: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = {kernel: Path(tmp) / f"{kernel}.json" for _, _, kernel, _, _ in figures}
        commands = {
            kernel: [*shmem, "trace", str(cubin), *args, "-f", "json"] + ["-o", str(out[kernel])]
            for _, _, kernel, cubin, args in figures
        }
        t = time_processes(commands, repeats)
        for figure, target, kernel, _, _ in figures:
            doc = json.loads(out[kernel].read_text())
            ran = doc["files"][0]["kernels"][0]["instructions_executed"]
            best = t[kernel].best
            report.row(
                figure,
                f"{best:.2f} s",
                f"< {target:g} s",
                best / target,
                best < target,
                f"({ran:,} thread-instructions, {ran / best / 1e6:.1f} M/s)",
            )
            details[kernel] = {"thread_instructions": ran, **t[kernel].summary()}
    report.details["trace"] = details


GRID_CUBIN = ROOT / "tests" / "data" / "trace" / "everyday" / "ev_grid.sm_90.cubin"
# the kernel whose 4,096 blocks the H200 measured (tests/data/trace/cluster)
DIFFER_CUBIN = ROOT / "tests" / "data" / "trace" / "cluster" / "differ.sm_90.cubin"
# causal attention's shape: block (x, y) loops x + 1 times (tests/data/trace/classes)
CLASSES_CUBIN = ROOT / "tests" / "data" / "trace" / "classes" / "classes.sm_90.cubin"


def grids(report: Report, shmem: list[str], repeats: int) -> None:
    """Whole grids against one block, all timed in one run: the 4096 x 4096 transpose
    (16,384 blocks whose edge guards on the block index hold in every block: proven alike,
    block (0,0,0) traced) against its one block, 4,096 blocks that differ (block b loops
    b % 32 + 1 times: 32 classes, one block of each traced) against 32 of them, and a
    causal grid (32 x 32 blocks, block (x, y) loops x + 1 times: 32 classes) against its
    first row of 32 blocks; the thread-instructions per second of the 4,096 blocks. Totals
    checked against the per-instruction counts measured on the H200 (the causal grid's
    against its count by hand)."""
    from shmem_cli.cuda import toolchain

    figures = (
        "trace: 16,384-block transpose / one block",
        "trace: 4,096 differing blocks / 32 blocks",
        "trace: whole grid (4,096 differing blocks), thread-instructions/s",
        "trace: causal grid, 32 x 32 blocks / its first row of 32",
        "trace: 16,384 differing blocks / 32 blocks",
        "trace: 65,536 differing blocks / 32 blocks",
    )
    if not command_exists(shmem, "trace") or toolchain.which("nvdisasm") is None:
        for figure in figures:
            report.row(figure, "not available", "", None, None)
        return
    print("grids: whole grids against one block, in one run", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        zeros = Path(tmp) / "z.bin"
        zeros.write_bytes(bytes(4096 * 4096 * 4))
        t_args = ["-k", "ev_transpose", "-b", "32,8", "-a", f"0=@{zeros}", "-a", f"1=@{zeros}"]
        t_args += ["-a", "width=4096", "-a", "height=4096"]
        d_args = ["-k", "differ", "-b", "256", "-a", "2=1048576"]
        big = ["--buffer-size", str(65536 * 256 * 4)]  # out[b * 256 + t] for every block
        c_args = ["-k", "cl_attn", "-b", "256", "-a", "1=64"]
        runs = {
            "transpose_grid": (GRID_CUBIN, [*t_args, "-g", "128,128"]),
            "transpose_block": (GRID_CUBIN, [*t_args, "-g", "1"]),
            "differ_4096": (DIFFER_CUBIN, [*d_args, "-g", "4096"]),
            "differ_32": (DIFFER_CUBIN, [*d_args, "-g", "32"]),
            "differ_16384": (DIFFER_CUBIN, [*d_args, *big, "-g", "16384"]),
            "differ_65536": (DIFFER_CUBIN, [*d_args, *big, "-g", "65536"]),
            "causal_grid": (CLASSES_CUBIN, [*c_args, "-g", "32,32"]),
            "causal_row": (CLASSES_CUBIN, [*c_args, "-g", "32,1"]),
        }
        out = {k: Path(tmp) / f"{k}.json" for k in runs}
        commands = {
            k: [*shmem, "trace", str(cubin), *args, "-f", "json", "-o", str(out[k])]
            for k, (cubin, args) in runs.items()
        }
        t = time_processes(commands, repeats)
        doc = {k: json.loads(out[k].read_text())["files"][0]["kernels"][0] for k in runs}
        peaks = {k: peak_rss_mb(commands[k])[0] for k in ("differ_16384", "differ_65536")}
    best = {k: t[k].best for k in runs}
    grid = doc["transpose_grid"]
    exact = (
        grid["totals"]["load"]["wavefronts"] == 16_777_216
        and grid["totals"]["store"]["wavefronts"] == 524_288
        and grid["totals"]["load"]["requests"] == 524_288
    )
    ratio = best["transpose_grid"] / best["transpose_block"]
    report.row(
        figures[0],
        f"{best['transpose_grid']:.2f} s / {best['transpose_block']:.2f} s",
        "<= 3x",
        ratio,
        ratio <= 3,
        ("exact" if exact else "TOTALS DIFFER from the H200's")
        + f", {grid['grid_coverage']['mode']}",
    )
    ratio = best["differ_4096"] / best["differ_32"]
    ran = doc["differ_4096"]["instructions_executed"]
    report.row(
        figures[1],
        f"{best['differ_4096']:.2f} s / {best['differ_32']:.2f} s",
        "<= 5x",
        ratio,
        ratio <= 5,
        f"({ran:,} thread-instructions, "
        + ("exact)" if _differ_exact(doc["differ_4096"]) else "TOTALS DIFFER from the H200's)"),
    )
    rate = ran / best["differ_4096"]
    report.row(figures[2], f"{rate / 1e6:.0f} M/s", "", None, None, "(end to end)")
    ratio = best["causal_grid"] / best["causal_row"]
    causal = doc["causal_grid"]["totals"]["load"]
    # 32 rows of blocks x = 0..31, each 64 (x + 1) loads of one wavefront (8 warps, 8 steps)
    want = 32 * sum(64 * (x + 1) for x in range(32))
    report.row(
        figures[3],
        f"{best['causal_grid']:.2f} s / {best['causal_row']:.2f} s",
        "<= 5x",
        ratio,
        ratio <= 5,
        ("exact" if causal["requests"] == causal["wavefronts"] == want else "TOTALS DIFFER")
        + f", {doc['causal_grid']['grid_coverage']['blocks_run']} blocks run",
    )
    for figure, k, blocks in (
        (figures[4], "differ_16384", 16384),
        (figures[5], "differ_65536", 65536),
    ):
        cov = doc[k]["grid_coverage"]
        report.row(
            figure,
            f"{best[k]:.2f} s / {best['differ_32']:.2f} s",
            "peak < 1 GiB",
            best[k] / best["differ_32"],
            peaks[k] < 1024,
            f"({cov['blocks_run']} blocks run, {cov['mode']}, "
            + ("exact" if _differ_loads(doc[k], blocks) else "TOTALS DIFFER")
            + f", peak {mb(peaks[k])})",
        )
    report.details["grids"] = {
        k: {
            "thread_instructions": doc[k]["instructions_executed"],
            "grid_coverage": doc[k]["grid_coverage"],
            **t[k].summary(),
        }
        for k in runs
    }


def _differ_exact(kernel: dict[str, Any]) -> bool:
    """The 4,096 differing blocks' shared loads and stores against the H200's per-instruction
    counts (tests/data/trace/cluster/measured.json)."""
    lab = ROOT / "tests" / "data" / "trace" / "cluster" / "measured.json"
    rows = next(m for m in json.loads(lab.read_text())["launches"] if m["id"] == "differ_4096")
    want = {"load": [0, 0], "store": [0, 0]}
    for i in rows["instructions"]:
        op = "load" if i["sass"].startswith("LDS") else "store"
        want[op][0] += i["Instructions Executed"]
        want[op][1] += i["L1 Wavefronts Shared"]
    got = {
        op: [kernel["totals"][op]["requests"], kernel["totals"][op]["wavefronts"]] for op in want
    }
    return got == want


def _differ_loads(kernel: dict[str, Any], blocks: int) -> bool:
    """differ.cu's shared totals by hand: block b loops b % 32 + 1 times, two reads of one
    wavefront a warp each time (8 warps), after one store a warp."""
    loads = sum(8 * 2 * (b % 32 + 1) for b in range(blocks))
    totals = kernel["totals"]
    return (
        totals["load"]["requests"] == totals["load"]["wavefronts"] == loads
        and totals["store"]["requests"] == totals["store"]["wavefronts"] == 8 * blocks
    )


SYNTH = ROOT / "tests" / "data" / "trace" / "synth"


def synthesis(report: Report, repeats: int) -> None:
    """Swizzle synthesis per shared array, in-process, on traced kernels: the bench SGEMM
    tile (K = 512), the 32x32 float transpose and the ldmatrix tile of tests/data/trace/synth
    (the trace itself is not timed)."""
    from shmem_cli.cuda import toolchain
    from shmem_cli.hardware.arch import SM90
    from shmem_cli.trace.fixes.arrays import array_of, static_arrays
    from shmem_cli.trace.fixes.synthesized import synthesize_array
    from shmem_cli.trace.kernel.cubin import find_kernel, read_cubin
    from shmem_cli.trace.pipeline import TraceRequest, trace_file

    cases = (
        ("SGEMM tile, K = 512", TRACE_CUBIN, "sgemm_tile", (256, 1, 1), ("M=64", "N=64", "K=512")),
        ("32x32 float transpose", SYNTH / "swizzled.none.sm_90.cubin", "transpose_f32",
         (32, 8, 1), ()),
        ("ldmatrix.x4 half tile", SYNTH / "swizzled.none.sm_90.cubin", "ldmatrix_tile",
         (128, 1, 1), ()),
    )  # fmt: skip
    if toolchain.which("nvdisasm") is None:
        for name, *_ in cases:
            report.row(f"synthesis: {name}", "not available", "< 2 s an array", None, None)
        return
    print("synthesis: the best XOR swizzle of each array of three traced kernels", flush=True)
    details = {}
    for name, cubin, kernel, block, args in cases:
        traced = trace_file(TraceRequest(cubin, kernel=kernel, block=block, args=args))
        arrays = static_arrays(cubin, find_kernel(read_cubin(cubin), kernel))
        recs = list(traced.kernels[0].records)
        per_array = {}
        for array in arrays:
            mine = [r for r in recs if array_of(r, arrays) is array]
            if mine:
                t = _best_seconds(lambda m=mine, a=array: synthesize_array(m, a, SM90), repeats)
                per_array[array.name] = t
        worst = max(per_array.values())
        note = ", ".join(f"{a} {t:.3f} s" for a, t in per_array.items())
        figure = f"synthesis: {name}"
        report.row(figure, f"{worst:.3f} s", "< 2 s an array", worst / 2.0, worst < 2.0, note)
        details[name] = per_array
    report.details["synthesis"] = details


def scaling(report: Report) -> None:
    """In-process analysis time as threads, iterations, accesses and widths grow, one at a time."""
    print(
        "scaling: in-process analysis time, one dimension at a time "
        "(base: 1024 threads, 1024 iterations, 1 access)"
    )
    series: list[tuple[str, int, int, list[str]]] = []
    series += [("threads", n, 1024, ["load 4 B"]) for n in (32, 128, 512, 1024)]
    series += [("iterations", 1024, n, ["load 4 B"]) for n in (1, 64, 1024, 16384)]
    series += [
        ("accesses", 1024, 1024, (["load 4 B", "store 4 B", "load 16 B", "load 8 B"] * 2)[:n])
        for n in (1, 2, 4, 8)
    ]
    series += [
        ("width", 1024, 1024, [p]) for p in ("load 4 B", "store 4 B", "load 8 B", "load 16 B")
    ]
    rows = []
    for dim, threads, iterations, patterns in series:
        spec = spec_from_mapping(scaling_spec(threads, iterations, patterns))
        lanes = threads * iterations * len(patterns)
        best = time_call(lambda spec=spec: analyze_spec(spec, detail=False), 3)
        row = {
            "vary": dim,
            "threads": threads,
            "iterations": iterations,
            "accesses": len(patterns),
            "patterns": patterns if dim == "width" else len(set(patterns)),
            "lane_accesses": lanes,
            "seconds": round(best, 5),
            "ns_per_lane_access": round(best / lanes * 1e9, 2),
        }
        rows.append(row)
        label = patterns[0] if dim == "width" else ""
        print(
            f"        {dim:10} T={threads:5} I={iterations:6} A={len(patterns)} {label:9} "
            f"{best * 1000:9.2f} ms  {row['ns_per_lane_access']:7.2f} ns/lane-access",
            flush=True,
        )
    report.details["scaling"] = rows


def _best_seconds(fn: Any, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def loading(report: Report, repeats: int) -> None:
    """The spec loader: a 50-line spec, and the refusal of hostile YAML (moved here from the
    unit tests, where a loaded CI machine could trip a wall-clock bound)."""
    from shmem_cli.plumbing.errors import ShmemError
    from shmem_cli.spec.source import load_yaml

    spec = (ROOT / "access_specs" / "transpose_naive.yaml").read_bytes()
    load_yaml(spec, "warm.yaml")
    best = _best_seconds(lambda: load_yaml(spec, "spec.yaml"), max(20, repeats))
    report.row("load a spec's YAML", ms(best), "< 5 ms", best / 0.005, best < 0.005)

    laughs = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    laughs += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    merges = ["m0: &m0 {k: 1}"]
    merges += [f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 9)}]}}" for i in range(1, 12)]
    flat = "a: &a [1]\nb: [" + ", ".join(["*a"] * 100_000) + "]\n"
    for figure, text in (
        ("refuse a billion-laughs document", "\n".join(laughs) + "\n"),
        ("load a merge-key bomb (bounded)", "\n".join(merges) + "\n"),
        ("refuse 100,000 aliases (MAX_ALIASES)", flat),
    ):

        def attempt(text: str = text) -> None:
            with contextlib.suppress(ShmemError):
                load_yaml(text, "bomb.yaml")

        best = _best_seconds(attempt, repeats)
        report.row(figure, ms(best), "< 2 s", best / 2, best < 2)


def _yaml(path: Path) -> Any:
    import yaml

    return yaml.safe_load(path.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results.json")
    parser.add_argument(
        "--markdown", type=Path, help="also write the tables as Markdown to this file"
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when a figure misses its target"
    )
    args = parser.parse_args()
    repeats = 2 if args.quick else max(1, args.repeats)
    # start-up must not pay for compiling shmem's own modules (an installed package has .pyc)
    compileall.compile_dir(str(ROOT / "shmem_cli"), quiet=1)
    shmem = shmem_command()
    report = Report()
    report.details["machine"] = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "shmem": shmem_cli.__version__,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "repeats": repeats,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    loading(report, repeats)
    engine_rate = throughput(report, shmem, repeats)
    reference(report, engine_rate)
    memory(report, shmem)
    startup(report, shmem, repeats)
    lint(report, shmem, repeats)
    sweep(report, shmem, repeats)
    trace(report, shmem, repeats)
    one_warp(report, repeats)
    grids(report, shmem, repeats)
    heavy_watch(report, shmem, repeats)
    deferred_evaluation(report, shmem, repeats)
    hostile(report, shmem, repeats)
    synthesis(report, repeats)
    if not args.quick:
        scaling(report)
    report.details["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print()
    print(report.table())
    args.json.write_text(json.dumps({"rows": report.rows, **report.details}, indent=2) + "\n")
    print(f"\nwrote {args.json}")
    if args.markdown:
        args.markdown.write_text(report.markdown())
        print(f"wrote {args.markdown}")
    missed = [r["figure"] for r in report.rows if r["result"] == "FAIL"]
    if missed:
        print(f"{len(missed)} figure(s) miss their target: " + "; ".join(missed))
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
