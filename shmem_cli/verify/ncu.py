"""Nsight Compute: the counters to collect and reading its ``--csv`` output.

Per kernel, one warp-level *request* is one executed shared-memory instruction
with at least one active lane (``smsp__sass_inst_executed_op_shared_*``; the
counter without ``sass_`` also counts warps whose lanes are all predicated off,
and is read only to show the difference) and a *wavefront* is one pass of the
shared-memory pipe (``l1tex__data_pipe_lsu_wavefronts_mem_shared_op_*``, raw).
Two more counters are read and reported apart: the bank-conflict counter per op
(``l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_*``) and the kernel-wide
arbitration counter (``l1tex__data_bank_conflicts_type_arbitration``), passes
lost to arbitration with other L1 traffic. Whether those passes are in an op's
raw count depends on the traffic (:meth:`Measured.basis` decides a match).
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Mapping

from ..hardware.ops import ARBITRATION_COUNTER, OPS, Op, get
from ..plumbing.bounded_read import MAX_CSV_LINE, csv_line_error, text_lines
from ..plumbing.errors import ShmemError, SourcePos
from ..plumbing.frozen import frozen

ARBITRATION = f"{ARBITRATION_COUNTER}.sum"


def _metric(counter: str) -> str:
    """The name ncu's CSV gives the sum of a counter over the GPU."""
    return counter + ".sum"


def spec_ops() -> tuple[Op, ...]:
    """The ops a spec may name: what verify measures (the counters are the op vocabulary's)."""
    return tuple(op for op in OPS if op.in_spec)


def wavefront_units() -> tuple[str, ...]:
    """The raw wavefront counter of every l1tex unit a spec op is counted under (ld, st, atom)."""
    return tuple(
        dict.fromkeys(op.counters.wavefronts for op in spec_ops() if op.counters.wavefronts)
    )


def metrics() -> tuple[str, ...]:
    """Every counter ``shmem verify`` asks ncu for: each spec op's, and the arbitration."""
    counters = {
        _metric(c)
        for op in spec_ops()
        for c in (
            op.counters.requests,
            op.counters.wavefronts,
            op.counters.all_requests,
            op.counters.conflicts,
        )
        if c is not None
    }
    return tuple(sorted(counters | {ARBITRATION}))


RAW = "raw"
LESS_ARBITRATION = "raw less arbitration"
PART_ARBITRATION = "raw less part of the arbitration"


@frozen
class Launch:
    """The counters of one profiled kernel launch."""

    kernel: str
    metrics: Mapping[str, float]
    compute_capability: str = ""


@frozen
class Measured:
    """What the GPU counted for one access."""

    requests: int  # smsp__sass_inst_executed_op_*: warps with an active lane
    wavefronts: int  # raw wavefronts minus arbitration
    wavefronts_raw: int
    arbitration: int  # kernel-wide
    bank_conflicts: int | None = None  # the op's bank-conflict counter, when recorded
    requests_with_predicated_off: int | None = None  # the counter without sass_
    other_wavefronts: int = 0  # raw wavefronts of the kernel's other shared-memory ops

    def basis(self, predicted: int) -> str | None:
        """How ``predicted`` wavefronts agree with the counters, or None when they do not.

        ``raw``: the op's raw counter equals the prediction (any arbitration belongs to
        other traffic). ``raw less arbitration``: the raw count less the whole
        arbitration counter does (measured on single-access kernels, where arbitration
        passes land in the op's own counter). ``raw less part of the arbitration``: the
        excess is smaller than the arbitration and the kernel has other shared-memory
        traffic that the rest of it can belong to.
        """
        excess = self.wavefronts_raw - predicted
        if excess == 0:
            return RAW
        if self.arbitration and excess == self.arbitration:
            return LESS_ARBITRATION
        if 0 < excess < self.arbitration and self.other_wavefronts > 0:
            return PART_ARBITRATION
        return None


def measured(launch: Launch, op_name: str) -> Measured:
    """The request and wavefront counts of ``launch`` for a spec op."""
    op = get(op_name)
    assert op.counters.wavefronts is not None, f"{op.name} has no wavefront counter"
    names = (_metric(op.counters.requests), _metric(op.counters.wavefronts))
    missing = [n for n in names if n not in launch.metrics]
    if missing:
        raise ShmemError(f"kernel {launch.kernel}: the ncu CSV lacks {', '.join(missing)}")
    raw = int(launch.metrics[names[1]])
    arb = int(launch.metrics.get(ARBITRATION, 0))
    conflicts = None if op.counters.conflicts is None else _metric(op.counters.conflicts)
    # (matrix ops: the counter without sass_ mixes in the plain loads/stores, so none)
    every = None if op.counters.all_requests is None else _metric(op.counters.all_requests)
    other = sum(
        int(launch.metrics.get(_metric(unit), 0))
        for unit in wavefront_units()
        if unit != op.counters.wavefronts
    )
    found_conflicts = None if conflicts is None else launch.metrics.get(conflicts)
    found_every = None if every is None else launch.metrics.get(every)
    return Measured(
        int(launch.metrics[names[0]]),
        raw - arb,
        raw,
        arb,
        bank_conflicts=None if found_conflicts is None else int(found_conflicts),
        requests_with_predicated_off=None if found_every is None else int(found_every),
        other_wavefronts=other,
    )


_NUMBER = re.compile(r"^-?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?\Z")


def parse_value(text: str) -> float | None:
    """A metric value as ncu prints it ("12", "1,024", "3.5"); None for "n/a" and the like."""
    t = text.strip()
    if not _NUMBER.match(t):
        return None
    return float(t.replace(",", ""))


#: rows of one ncu --csv file, the header included (one metric of one launch each: ncu
#: writes about 300 bytes a row, so a file of MAX_CSV_BYTES holds about 220,000)
MAX_ROWS = 1_000_000
#: launches of one file (verify profiles one kernel an access); each keeps its metrics
MAX_LAUNCHES = 100_000


def parse_csv(text: str, source: str = "<ncu csv>") -> list[Launch]:
    """Every kernel launch in ``ncu --csv`` output, in order.

    ncu interleaves its own ``==PROF==`` lines and the program's output with the
    CSV; only lines that start with a double quote are CSV. One row holds one
    metric of one launch (``ID`` numbers the launches). At most :data:`MAX_ROWS` rows
    and :data:`MAX_LAUNCHES` launches are read (1.5 million rows of short launches, 25 MB,
    held 1 GiB); the lines are looked at one at a time (a list of 60 million blank ones
    took 600 MB).
    """
    numbered: list[tuple[int, str]] = []
    for n, row in enumerate(text_lines(text), 1):
        if row.startswith('"'):
            if len(row) > MAX_CSV_LINE:
                raise csv_line_error(source, n, "ncu")
            if len(numbered) == MAX_ROWS:
                raise _too_many(f"{MAX_ROWS:,} CSV rows", source, n)
            numbered.append((n, row))
    if not numbered:
        raise ShmemError("no CSV rows found: is this the output of ncu --csv?", path=source)
    reader = csv.DictReader(io.StringIO("\n".join(line for _, line in numbered)))
    try:
        return _launches(reader, source)
    except csv.Error as exc:  # a field past csv's limit (128 KiB), an odd quote
        line = numbered[min(reader.line_num + 1, len(numbered)) - 1][0]  # the row being read
        raise ShmemError(
            f"not ncu --csv output: {exc}", path=source, pos=SourcePos(line, 1), code="ncu"
        ) from None
    except _TooManyLaunches:
        line = numbered[min(reader.line_num, len(numbered)) - 1][0]
        raise _too_many(f"{MAX_LAUNCHES:,} launches", source, line) from None


class _TooManyLaunches(Exception):
    """Raised by :func:`_launches` past :data:`MAX_LAUNCHES` (placed by :func:`parse_csv`)."""


def _too_many(what: str, source: str, line: int) -> ShmemError:
    return ShmemError(
        f"more than {what}: shmem verify's own profile of a spec holds one launch an access "
        "(about 20 rows each); give the ncu.csv that run.sh or --keep wrote for these specs",
        path=source,
        pos=SourcePos(line, 1),
        code="ncu",
    )


def _launches(reader: csv.DictReader[str], source: str) -> list[Launch]:
    needed = ("Kernel Name", "Metric Name", "Metric Value")
    header = reader.fieldnames or []
    if any(col not in header for col in needed):
        raise ShmemError(
            f"the CSV header lacks {', '.join(c for c in needed if c not in header)}; "
            "expected ncu --csv output (one row per metric)",
            path=source,
        )
    launches: dict[str, dict[str, float]] = {}
    names: dict[str, str] = {}
    cc: dict[str, str] = {}
    order: list[str] = []
    for row in reader:
        kernel = (row["Kernel Name"] or "").split("(")[0].strip()
        launch_id = row.get("ID") or kernel
        if launch_id not in launches:
            if len(launches) == MAX_LAUNCHES:
                raise _TooManyLaunches
            launches[launch_id] = {}
            names[launch_id] = kernel
            cc[launch_id] = row.get("CC") or ""
            order.append(launch_id)
        value = parse_value(row["Metric Value"] or "")
        if value is not None:
            launches[launch_id][row["Metric Name"]] = value
    return [Launch(names[i], launches[i], cc[i]) for i in order]


#: The largest ncu CSV read (ncu writes about 300 bytes per metric and launch).
MAX_CSV_BYTES = 64 << 20


def read_csv(path: str | os.PathLike[str]) -> list[Launch]:
    """The launches of an ``ncu --csv`` file (a regular file, at most MAX_CSV_BYTES)."""
    from ..plumbing.bounded_read import read_bounded

    name = os.fspath(path)
    data = read_bounded(name, MAX_CSV_BYTES, what="the ncu CSV", code="ncu", text=True)
    return parse_csv(data.decode("utf-8-sig", errors="replace"), name)  # a BOM is no text


def by_kernel(launches: list[Launch]) -> dict[str, list[Launch]]:
    out: dict[str, list[Launch]] = {}
    for launch in launches:
        out.setdefault(launch.kernel, []).append(launch)
    return out
