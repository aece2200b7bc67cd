"""Nsight Compute's exports read for ``--compare``: the per-instruction source page
(:func:`read_ncu_csv`) and the per-launch raw page (:func:`read_ncu_raw`).

``ncu -i REPORT --page source --csv --print-source sass`` writes one table per profiled
launch: a ``"Kernel Name",NAME`` line, a header row (``Address``, ``Source``, ...,
``Instructions Executed``, ``L1 Wavefronts Shared``, ``L1 Wavefronts Shared Ideal``) and one
row per SASS instruction at its absolute address. A row's pc is its address less the table's
first.

The file is an input anyone can commit, so it is read bounded and streamed: at most
:data:`MAX_CSV_BYTES` (a gzip file unpacked only that far), rows parsed as they come (line ends
``\\n``, ``\\r\\n`` or a bare ``\\r``), only the tables of the kernels asked for kept, at most
:data:`MAX_ROWS` of their rows in all, each counter a whole number below 2^63 (``1e309``,
``nan`` or a 40-digit count is an error at its line), a field at most 128 KiB.

``ncu -i REPORT --page raw --csv`` writes a header row (``ID``, ..., ``Kernel Name``, ...,
then one column per metric, ``l1tex__..._op_misc.sum``), a row of units, and one row per
profiled launch; its counters are read the same way (at most :data:`MAX_RAW_ROWS` launches).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterator
from pathlib import Path

from ...hardware.ops import SOURCE_COLUMNS, launch_counters
from ...plumbing.bounded_read import csv_lines, read_bounded
from ...plumbing.errors import ShmemError, SourcePos, shorten
from ...plumbing.frozen import frozen

MAX_CSV_BYTES = 256 << 20
MAX_ROWS = 1_000_000  # instruction rows kept, over every table of the kernels compared
MAX_OTHER_NAMES = 20  # names of other kernels' tables kept for an error
MAX_RAW_ROWS = 100_000  # launches of the raw page kept
MAX_TABLES = 10_000  # tables (profiled launches) of the kernels compared
#: records of one CSV, blank ones included: ncu's rows take 250 bytes or more, so a 256 MiB
#: export has about a million; each record costs Python's loop a microsecond or two, and
#: 256 MiB of blank lines (a 250 KiB gzip) took 100 s before this bound
MAX_RECORDS = 4_000_000
#: characters of the distinct kernel names of one CSV (each is matched against the kernels
#: traced, at about 6 MiB a second)
MAX_NAME_CHARS = 8 << 20
#: distinct kernel names of one CSV: each costs its match some 50 microseconds however short
#: (1.3 million names of a few characters, 28 MB, took 73 s before this bound)
MAX_NAMES = 100_000
EXECUTED, WAVEFRONTS, IDEAL = SOURCE_COLUMNS.all
COUNTERS = (EXECUTED, WAVEFRONTS, IDEAL)


@frozen
class NcuTable:
    """One launch's table of the source page (``rows`` empty for a kernel not asked for)."""

    kernel: str
    rows: tuple[tuple[int, str, dict[str, int | None]], ...]  # (pc, sass, counters)


def _at(message: str, where: str, line: int) -> ShmemError:
    """A bad export, said at its line."""
    return ShmemError(message, path=where, pos=SourcePos(line, 1), code="input")


def _records(data: bytes, where: str) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of every CSV record, streamed; a malformed one is a located error."""
    # utf-8-sig: a byte-order mark (a CSV saved again by a Windows tool) is not text of the
    # first field, which would hide its "Kernel Name" or "ID"
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="replace", newline="")
    reader = csv.reader(csv_lines(stream, where, "input"))
    for _ in range(MAX_RECORDS):
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            line = reader.line_num
            raise _at(
                f"not a CSV record Nsight Compute writes ({shorten(str(exc), 80)}); export "
                "with `ncu -i REPORT --page source --csv --print-source sass`",
                where,
                max(line, 1),
            ) from None
        yield reader.line_num, record
    try:
        more = next(reader, None) is not None
    except csv.Error:
        more = True
    if more:
        raise _at(
            f"the CSV holds more than {MAX_RECORDS:,} lines, where a {MAX_CSV_BYTES >> 20} MiB "
            "export of Nsight Compute has about a million (blank lines?): export the kernel "
            "you trace (ncu -i REPORT --page source --csv --print-source sass "
            "--kernel-name NAME --launch-count 1)",
            where,
            reader.line_num,
        )


class _Names:
    """The distinct kernel names a CSV has given so far, their characters bounded."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.seen: set[str] = set()
        self.chars = 0

    def add(self, name: str, line: int) -> None:
        if name in self.seen:
            return
        self.chars += len(name)
        if self.chars > MAX_NAME_CHARS or len(self.seen) >= MAX_NAMES:
            much = (
                f"{MAX_NAME_CHARS >> 20} MiB of distinct kernel names"
                if self.chars > MAX_NAME_CHARS
                else f"{MAX_NAMES:,} distinct kernel names"
            )
            raise _at(
                f"the CSV names more than {much}: "
                "export the kernel you trace (ncu --kernel-name NAME --launch-count 1)",
                self.where,
                line,
            )
        self.seen.add(name)


def count(text: str, where: str, line: int, column: str) -> int | None:
    """A counter's value: a whole number (``1,024`` or ``1024.0``), None where ncu prints none."""
    t = text.strip().replace(",", "")
    if t in ("", "-", "n/a"):
        return None
    value: float | int | None = None
    if len(t) <= 24 and t.isascii():
        if t.isdigit():
            value = int(t)
        else:
            try:
                value = float(t)
            except ValueError:
                value = None
    if value is None or not math.isfinite(value) or value < 0 or value >= 2**63:
        raise _at(
            f"{column!r} is {shorten(text)!r}, not a count of at most 2^63",
            where,
            line,
        )
    return int(value)


def _read(path: str | Path) -> bytes:
    """The CSV's bytes (bounded; gzip unpacked)."""
    return read_bounded(
        path, MAX_CSV_BYTES, what="Nsight Compute CSV", code="input", gunzip=True, text=True
    )


def read_ncu_csv(path: str | Path, keep: Callable[[str], bool] | None = None) -> list[NcuTable]:
    """Every table of a source-page CSV; with ``keep``, the rows only of the tables whose
    kernel it takes (the others are named, up to :data:`MAX_OTHER_NAMES`, without rows)."""
    return _source_tables(_read(path), str(path), keep)


def _source_tables(data: bytes, where: str, keep: Callable[[str], bool] | None) -> list[NcuTable]:
    """:func:`read_ncu_csv` of the CSV's bytes."""
    tables: list[NcuTable] = []
    others: dict[str, None] = {}
    kernel: str | None = None
    wanted = False
    columns: list[int | None] | None = None  # None: a column the table leaves out (a zero)
    width = 0
    rows: list[tuple[int, str, dict[str, int | None]]] = []
    kept = kept_tables = 0
    base = 0
    names = _Names(where)

    def close() -> None:
        if kernel is None or columns is None:
            return
        if wanted:
            tables.append(NcuTable(kernel, tuple(rows)))
        elif kernel not in others and len(others) < MAX_OTHER_NAMES:
            others[kernel] = None
            tables.append(NcuTable(kernel, ()))

    for line, record in _records(data, where):
        if len(record) >= 2 and record[0] == "Kernel Name":
            close()
            kernel, columns, rows = record[1], None, []
            names.add(kernel, line)
            wanted = keep is None or keep(kernel)
            kept_tables += wanted
            if kept_tables > MAX_TABLES:
                raise _at(
                    f"the CSV holds more than {MAX_TABLES:,} tables of the kernel compared: "
                    "profile fewer launches (ncu --kernel-name NAME --launch-count 1)",
                    where,
                    line,
                )
        elif kernel is not None and record[:2] == ["Address", "Source"]:
            missing = [c for c in COUNTERS if c not in record]
            if missing and (not wanted or missing == [WAVEFRONTS, IDEAL] and EXECUTED in record):
                # another kernel's table, or one of a kernel with no shared-memory instruction:
                # Nsight Compute leaves its L1 shared columns out (every such count is zero)
                columns = [record.index(c) if c in record else None for c in COUNTERS]
                width = len(record)
            elif missing:
                raise _at(
                    f"the table of {shorten(kernel)} has no column {missing[0]!r}: profile with "
                    "`ncu --section SourceCounters` and export with `ncu -i REPORT --page "
                    "source --csv --print-source sass`",
                    where,
                    line,
                )
            else:
                columns, width = [record.index(c) for c in COUNTERS], len(record)
        elif columns is not None and wanted and len(record) == width:
            try:
                address = int(record[0], 16) if len(record[0]) <= 20 else None
            except ValueError:
                address = None
            if address is None:
                continue
            if not rows:
                base = address
            kept += 1
            if kept > MAX_ROWS:
                raise _at(
                    f"the CSV holds more than {MAX_ROWS:,} instruction rows of the kernel "
                    "compared: profile one launch (ncu --kernel-name NAME --launch-count 1)",
                    where,
                    line,
                )
            counters = {
                name: 0 if k is None else count(record[k], where, line, name)
                for name, k in zip(COUNTERS, columns, strict=True)
            }
            rows.append((address - base, record[1], counters))
    close()
    if not tables:
        raise ShmemError(
            "no Nsight Compute source table here: expected the output of `ncu -i REPORT "
            '--page source --csv --print-source sass` ("Kernel Name" lines, then "Address", '
            '"Source", ... rows)',
            path=where,
            code="input",
        )
    return tables


@frozen
class NcuLaunch:
    """One launch's row of the raw page: its kernel and its ``.sum`` counters (by name
    without ``.sum``; only the counters the row gives a number)."""

    kernel: str
    counters: dict[str, int]
    #: its grid and block as the page writes them (``(2, 1, 1)``), where it has those columns
    grid: tuple[int, ...] | None = None
    block: tuple[int, ...] | None = None


def _dims(text: str) -> tuple[int, ...] | None:
    """``(2, 1, 1)`` as the raw page writes a launch's grid or block; None for anything else."""
    parts = text.strip().removeprefix("(").removesuffix(")").split(",")
    if len(parts) != 3 or not all(p.strip().isdigit() and len(p.strip()) <= 10 for p in parts):
        return None
    return tuple(int(p) for p in parts)


@frozen
class NcuExport:
    """A CSV given to ``--compare``: the source page's tables, or the raw page's launches."""

    tables: list[NcuTable]
    launches: list[NcuLaunch] | None  # None: the source page


def read_ncu_export(path: str | Path, keep: Callable[[str], bool] | None = None) -> NcuExport:
    """Either page, read once: the raw page's launches, or the source page's tables (with
    ``keep``, as :func:`read_ncu_csv`)."""
    data, where = _read(path), str(path)
    if _is_raw(data, where):
        return NcuExport([], _raw_launches(data, where))
    return NcuExport(_source_tables(data, where, keep), None)


def is_raw_page(path: str | Path) -> bool:
    """Whether the CSV is Nsight Compute's raw page (its first record names ``ID`` and
    ``Kernel Name`` columns) rather than the source page."""
    return _is_raw(_read(path), str(path))


def _is_raw(data: bytes, where: str) -> bool:
    for _, record in _records(data, where):
        if record and record[0].startswith("=="):
            continue  # ncu's own messages before the table
        return _raw_header(record)
    return False


def _raw_header(record: list[str]) -> bool:
    """The raw page's header row: it names ``ID`` and ``Kernel Name`` columns."""
    return "Kernel Name" in record and "ID" in record


def read_ncu_raw(path: str | Path) -> list[NcuLaunch]:
    """Every launch of a raw-page CSV, with its summed counters."""
    return _raw_launches(_read(path), str(path))


_DIMS = ("Grid Size", "Block Size")  # the raw page's columns of a launch's shape


def _raw_launches(data: bytes, where: str) -> list[NcuLaunch]:
    """:func:`read_ncu_raw` of the CSV's bytes."""
    head: list[str] | None = None
    name = 0
    out: list[NcuLaunch] = []
    compared = launch_counters()
    names = _Names(where)
    for line, record in _records(data, where):
        if head is None:
            if _raw_header(record):
                head, name = record, record.index("Kernel Name")
            continue
        if len(record) != len(head) or not record[name] or not record[0].strip().isdigit():
            continue  # the units row, ncu's messages
        if len(out) >= MAX_RAW_ROWS:
            raise _at(
                f"the CSV holds more than {MAX_RAW_ROWS:,} launches: profile the launch you "
                "trace (ncu --kernel-name NAME --launch-count 1)",
                where,
                line,
            )
        names.add(record[name], line)
        counters = {}
        for column, text in zip(head, record, strict=True):
            if column.endswith(".sum"):
                metric = column.removesuffix(".sum")
                try:
                    value = count(text, where, line, column)
                except ShmemError:
                    if metric in compared:
                        raise  # a counter --compare reads must be a count
                    value = None  # a column of text (ncu prints some counters so)
                if value is not None:
                    counters[metric] = value
        dims = [_dims(record[head.index(c)]) if c in head else None for c in _DIMS]
        out.append(NcuLaunch(record[name], counters, *dims))
    if head is None:
        raise ShmemError(
            "no Nsight Compute raw page here: expected the output of `ncu -i REPORT --page raw "
            '--csv` (an "ID", ..., "Kernel Name", ... header, then one row per launch)',
            path=where,
            code="input",
        )
    return out
