"""The worst grid known for the rounds of watched blocks, traced by class against every block
run plainly, in one run.

tests/data/trace/ballots's ``bl_tiles`` at k = 7 with 8 tiles over 4,096 blocks: each thread
is its own group of ``x % 7``'s instructions, whose vectors over the 4,096 blocks the watch
makes for each block it watches (52 million values for the first: some 0.4 times running
every block plainly), while a class saves a seventh of the grid. What the rounds may spend,
watching and evaluating together, is alike/spend.py's rule (:func:`...spend.allowed`: a
quarter of running every block plainly, besides what the classes found save; the first
round half of it), so they end after the first block's round, whose class stands, and the
3,510 blocks left run. Before the values made whole were charged the rounds went on: 1.9 to
2.1 times every block run plainly (their next round's vectors evaluated window by window
until that budget ran out, with the vectors' memory full). The totals and
thread-instructions of the two must be equal; the peak memory of the run by class is
reported beside them.
"""

from __future__ import annotations

from typing import Any

from measure import ROOT, by_class_and_every_block, peak_rss_mb, same_totals

CUBIN = ROOT / "tests" / "data" / "trace" / "ballots" / "ballots.sm_90.cubin"
ARGS = ["-k", "bl_tiles", "-b", "256", "-g", "4096", "-a", "1=7", "-a", "2=8", "--no-tables"]
#: repeats at most (the two take about 7 s and 6 s of CPU on the development machine)
REPEATS = 2
#: by class against every block run plainly, at most: the first block's round and the rest
#: run plainly (1.1x to 1.25x of CPU at load 3 to 5, 2026-12-06, 1.57x of wall time; since
#: the watch compares spread vectors at their distinct blocks, 1.32x of CPU and 1.31x of wall
#: time at load 4, where the tree before took 1.42x in the same run); 1.9x to 2.1x before
#: the values made whole were charged
TARGET = 1.6


def deferred_evaluation(report: Any, shmem: list[str], repeats: int) -> None:
    """bl_tiles (k = 7, 8 tiles, 4,096 blocks) by class against every block run plainly."""
    from shmem_cli.cuda import toolchain

    figure = "trace: rounds ended, bl_tiles k=7 x 8 tiles by class / every block"
    if toolchain.which("nvdisasm") is None:
        report.row(figure, "not available", f"<= {TARGET:g}x", None, None)
        return
    print("evaluate: bl_tiles over 4,096 blocks against every block run plainly", flush=True)
    t, doc = by_class_and_every_block([str(CUBIN), *ARGS], shmem, min(repeats, REPEATS))
    peak = peak_rss_mb([*shmem, "trace", str(CUBIN), *ARGS])[0]
    by_class, same = doc["by_class"], same_totals(doc)
    cov = by_class["grid_coverage"]
    ratio = t["by_class"].best / t["every_block"].best
    report.row(
        figure,
        f"{t['by_class'].best:.2f} s / {t['every_block'].best:.2f} s",
        f"<= {TARGET:g}x",
        ratio,
        ratio <= TARGET,
        ("exact" if same else "TOTALS DIFFER")
        + f", {cov['blocks_run']} of {cov['blocks']} blocks run, peak {peak:.0f} MB",
    )
    report.details["evaluate"] = {
        k: {"grid_coverage": doc[k]["grid_coverage"], **t[k].summary()} for k in doc
    }
    report.details["evaluate"]["by_class"]["peak_rss_mb"] = round(peak, 1)
