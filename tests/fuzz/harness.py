"""A time-bounded fuzz loop over hypothesis tests, and the checks every input must pass.

Each target is a hypothesis ``@given`` function. :func:`run_for` feeds it random
byte buffers through hypothesis' fuzz entry point (``.hypothesis.fuzz_one_input``)
until the time is up: hypothesis turns the bytes into structured inputs (spec
texts, expressions, ...), so no atheris is needed. A failure is re-raised with the
input that caused it.
"""

from __future__ import annotations

import os
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import shmem_cli.spec.space
from shmem_cli.analysis.analyze import analyze_spec
from shmem_cli.model import FileResult, Report
from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.render.options import RenderOptions
from shmem_cli.render.report_formats import render_json
from shmem_cli.render.text import render_text
from shmem_cli.spec.compile import compile_spec
from shmem_cli.spec.source import load_yaml

ITERATIONS: Counter[str] = Counter()
MESSAGE_LIMIT = 600  # characters of one rendered problem: user data must be cut short
FAST_LIMIT = 1 << 20  # lane-accesses per access while fuzzing, to keep every input quick

_last: dict[str, Any] = {}


def remember(value: Any) -> None:
    """Record the input now being tried, for the failure report."""
    _last["input"] = value


@contextmanager
def quick_limits() -> Iterator[None]:
    """Lower the lane-access limit so a random spec can never run for long."""
    saved = shmem_cli.spec.space.MAX_LANE_ACCESSES
    shmem_cli.spec.space.MAX_LANE_ACCESSES = FAST_LIMIT
    try:
        yield
    finally:
        shmem_cli.spec.space.MAX_LANE_ACCESSES = saved


def run_for(target: Callable[..., Any], seconds: float, name: str) -> int:
    """Fuzz ``target`` for ``seconds``; returns the number of inputs tried."""
    fuzz = target.hypothesis.fuzz_one_input  # type: ignore[attr-defined]
    rng = random.Random(int.from_bytes(os.urandom(8), "little"))
    deadline = time.monotonic() + seconds
    count = 0
    with quick_limits():
        while time.monotonic() < deadline:
            buffer = rng.randbytes(rng.choice((64, 256, 1024, 4096)))
            _last.clear()
            try:
                fuzz(buffer)
            except BaseException as exc:
                shown = repr(_last.get("input"))[:4000]
                raise AssertionError(f"fuzz target {name} failed on input {shown}") from exc
            count += 1
    ITERATIONS[name] += count
    return count


def check_error(err: ShmemError, path: str) -> None:
    """What every user-facing error must look like (each problem of a file, one line each)."""
    for one in err.all:
        text = one.render_one()
        assert one.path == path, text
        assert text.startswith(path), text
        assert "\n" not in text, text
        assert len(text) <= MESSAGE_LIMIT, f"error message of {len(text)} characters"
        text.encode("utf-8")  # printable


def analyze_bytes(raw: bytes, path: str = "fuzz.yaml") -> None:
    """Load, compile and analyze spec bytes as ``shmem analyze`` does: a clean result
    or a :class:`ShmemError` naming the file, nothing else."""
    try:
        spec = compile_spec(load_yaml(raw, path), raw)
        result = analyze_spec(spec)
    except ShmemError as err:
        err.located(path)
        check_error(err, path)
        result = FileResult(path=path, name="fuzz", error=err)
    # the report must render and be printable as UTF-8, as the CLI writes it
    report = Report(files=(result,))
    render_text(report, RenderOptions(width=120)).encode("utf-8")
    render_json(report).encode("utf-8")
