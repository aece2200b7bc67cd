"""Hostile inputs whose only tell is time (moved here from the unit tests, where a loaded CI
machine could trip a wall-clock bound; the tests prove what stops each run, this times it).

* A spin on a peer CTA's shared memory in a 16-CTA cluster (tests/data/hostile/hostile2.cu's
  wait_peer): the repeat check stops it (tests/test_hostile_kernels.py proves that, under a
  launch budget); counting the distributed shared memory sectors of its 16,384 lanes with
  ``np.unique(axis=1)`` took 8 ms a step, 13 s in all, a 1-D key about 1-2 s (its state kept
  sooner for the repeat check did the rest). The count alone is timed too: ``np.unique``
  of rows took 11 ms for one load of 16,384 lanes here, the 1-D key 2 ms.
"""

from __future__ import annotations

from typing import Any

from measure import ROOT, Timing, run_process, time_call

HOSTILE2 = ROOT / "tests" / "data" / "hostile" / "hostile2.sm_90.cubin"


def hostile(report: Any, shmem: list[str], repeats: int) -> None:
    """Refusals timed end to end (start-up, nvdisasm, emulation until the refusal), and the
    step that made one slow."""
    import numpy as np

    from shmem_cli.cuda import toolchain
    from shmem_cli.hardware import dsmem

    warps = np.repeat(np.arange(512), 32)  # a 16-CTA cluster's 16,384 lanes, 4-byte loads
    at = np.random.default_rng(0).integers(0, 1 << 20, len(warps)) * 4
    best = time_call(lambda: dsmem.sectors(warps, at, 4, "ld"), max(20, repeats))
    figure = "count the DSMEM sectors of one load of 16,384 lanes"
    report.row(figure, f"{best * 1e3:.1f} ms", "< 5 ms", best / 0.005, best < 0.005)

    figure, target = "trace: refuse a spin on a peer CTA's shared memory (16-CTA cluster)", 5.0
    if toolchain.which("nvdisasm") is None:
        report.row(figure, "not available", f"< {target:g} s", None, None)
        return
    print("hostile: refusals of tests/data/hostile/hostile2.cu's kernels", flush=True)
    spin = [*shmem, "trace", str(HOSTILE2), "-k", "wait_peer", "-b", "1024", "--grid", "16"]
    spin += ["--cluster", "16", "--no-tables", "--max-launch-instructions", "8000000"]
    timing, refused = Timing(), True
    for _ in range(repeats):
        run = run_process(spin)
        timing.add(run)
        refused = refused and run.returncode == 2 and "can never end" in run.stdout
    best = timing.best
    report.row(
        figure,
        f"{best:.2f} s",
        f"< {target:g} s",
        best / target,
        refused and best < target,
        "" if refused else "NOT REFUSED by the repeat check",
    )
    report.details["hostile"] = {"wait_peer": timing.summary()}
