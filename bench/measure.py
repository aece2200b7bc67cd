"""Timing helpers for bench/run.py: whole processes (wall time, CPU time, peak memory)
and in-process calls.

Every figure is the *minimum* over a few repeats: on a shared machine other
processes only ever add time, so the minimum is the best estimate of the cost
itself; the median is recorded next to it to show the noise.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Run:
    """One finished process."""

    wall: float  # seconds, start to exit
    cpu: float  # user + system seconds, its waited-for children included
    returncode: int
    stdout: str


@dataclass
class Timing:
    """Repeated measurements of one thing."""

    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)

    def add(self, run: Run) -> None:
        self.walls.append(run.wall)
        self.cpus.append(run.cpu)

    @property
    def best(self) -> float:
        return min(self.walls)

    @property
    def median(self) -> float:
        return statistics.median(self.walls)

    def summary(self) -> dict[str, float]:
        return {
            "wall_min_s": round(self.best, 4),
            "wall_median_s": round(self.median, 4),
            "cpu_min_s": round(min(self.cpus), 4),
            "repeats": len(self.walls),
        }


def child_env() -> dict[str, str]:
    """The environment for measured processes: as ours, colors off."""
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    env.pop("FORCE_COLOR", None)
    return env


def run_process(argv: Sequence[str], *, cwd: Path = ROOT) -> Run:
    """Run ``argv`` to completion; its output goes to a file, so no pipe slows it down."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(argv), cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=child_env()
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped by wait4
        out.seek(0)
        text = out.read().decode("utf-8", errors="replace")
    return Run(
        wall=wall, cpu=usage.ru_utime + usage.ru_stime, returncode=proc.returncode, stdout=text
    )


TIME = Path("/usr/bin/time")


def peak_rss_mb(argv: Sequence[str]) -> tuple[float, Run]:
    """Peak resident memory of a process, in MB, as GNU time reports it.

    Not from our own wait4(): a child forked from this (large) Python process
    starts with our memory high-water mark, and Linux keeps it across exec, so
    its ru_maxrss would never read below ours. GNU time is small.
    """
    if not TIME.exists():
        raise RuntimeError("peak memory needs GNU time (/usr/bin/time)")
    run = run_process([str(TIME), "-f", "%M", *argv])
    kilobytes = int(run.stdout.strip().splitlines()[-1])
    return kilobytes / 1024, run


def time_processes(commands: dict[str, Sequence[str]], repeats: int) -> dict[str, Timing]:
    """Time several commands, interleaved so that they share the machine's ups and downs."""
    timings = {name: Timing() for name in commands}
    for _ in range(repeats):
        for name, argv in commands.items():
            timings[name].add(run_process(argv))
    return timings


def time_call(fn: Callable[[], object], repeats: int) -> float:
    """Best wall time of ``fn()`` in this process, after one untimed warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def shmem_command() -> list[str]:
    """The ``shmem`` console script next to this Python (a virtualenv's), else ``python -m``."""
    script = Path(sys.executable).parent / "shmem"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "shmem_cli.cli"]


def by_class_and_every_block(
    trace: Sequence[str], shmem: Sequence[str], repeats: int
) -> tuple[dict[str, Timing], dict[str, dict[str, object]]]:
    """``shmem trace TRACE`` as shmem runs it (by class) and with every block run in plain
    batches (bench/every_block.py), timed in one run: each one's timing and its kernel's
    JSON report, under ``by_class`` and ``every_block``."""
    import json

    with tempfile.TemporaryDirectory() as tmp:
        out = {k: Path(tmp) / f"{k}.json" for k in ("by_class", "every_block")}
        argv = ["trace", *trace, "-f", "json", "-o"]
        commands = {
            "by_class": [*shmem, *argv, str(out["by_class"])],
            "every_block": [sys.executable, str(ROOT / "bench" / "every_block.py"), *argv,
                            str(out["every_block"])],
        }  # fmt: skip
        timings = time_processes(commands, repeats)
        docs = {k: json.loads(out[k].read_text())["files"][0]["kernels"][0] for k in out}
    return timings, docs


def same_totals(docs: dict[str, dict[str, object]]) -> bool:
    """Whether the two reports of :func:`by_class_and_every_block` count alike."""
    by_class, every = docs["by_class"], docs["every_block"]
    keys = ("totals", "instructions_executed")
    return all(by_class[k] == every[k] for k in keys)
