"""Hostile ``--compare`` CSVs (issue 28): counters that are not counts, bare CR line ends,
a 128 KiB field, a gzip bomb of rows. Each is a located error or a result, read streamed with
bounded memory; only the compared kernel's tables keep their rows."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from shmem_cli.plumbing.errors import ShmemError
from shmem_cli.trace.ncu.exports import MAX_ROWS, read_ncu_csv

from .conftest import TEST_DATA, needs_nvdisasm
from .hostile import PEAK_LIMIT_MIB, refused, shmem

REAL = TEST_DATA / "triton" / "ncu" / "layernorm.csv"
ENTRY = TEST_DATA / "triton" / "cache" / "BNA37UX6NG47NQSUZID23JEHSIPE3YFLJEPGHWSGJUGSKGQ6TXBA"
HEAD = (
    '"Kernel Name","k"\n"Address","Source","Instructions Executed","L1 Wavefronts Shared",'
    '"L1 Wavefronts Shared Ideal"\n'
)


def row(address: int, executed: str = "1") -> str:
    return f'"0x{address:x}","LDS R0, [R1]","{executed}","1","1"\n'


@pytest.mark.parametrize(
    ("executed", "fragment"),
    [
        ("1e309", "'Instructions Executed' is '1e309', not a count of at most 2^63"),
        ("nan", "is 'nan', not a count"),
        ("-3", "is '-3', not a count"),
        ("9" * 40, "is '99999"),
        ("\u0661\u0662", "not a count"),
    ],
)
def test_counters_that_are_not_counts(tmp_path: Path, executed: str, fragment: str) -> None:
    path = tmp_path / "ncu.csv"
    path.write_text(HEAD + row(0x7F00) + row(0x7F10, executed))
    with pytest.raises(ShmemError) as err:
        read_ncu_csv(path)
    assert fragment in err.value.message
    assert (err.value.path, err.value.line) == (str(path), 4)


def test_line_ends_of_every_kind(tmp_path: Path) -> None:
    text = HEAD + row(0x7F00, "1,024") + row(0x7F10, "2.0")
    for end in ("\n", "\r\n", "\r"):
        path = tmp_path / "ncu.csv"
        path.write_bytes(text.replace("\n", end).encode())
        (table,) = read_ncu_csv(path)
        assert [(pc, c["Instructions Executed"]) for pc, _, c in table.rows] == [(0, 1024), (16, 2)]


def test_a_byte_order_mark_is_not_read_as_text(tmp_path: Path) -> None:
    """A CSV saved again by a Windows tool starts with a BOM: its first field read
    '\ufeffKernel Name', and the file had no table."""
    path = tmp_path / "ncu.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (HEAD + row(0x7F00, "1,024") + row(0x7F10)).encode())
    (table,) = read_ncu_csv(path)
    assert table.kernel == "k"
    assert [(pc, c["Instructions Executed"]) for pc, _, c in table.rows] == [(0, 1024), (16, 1)]


def test_a_field_past_128_kib_is_a_located_error(tmp_path: Path) -> None:
    path = tmp_path / "ncu.csv"
    for size, name in ((128 << 10, "k"), (128 << 10, "A" * (128 << 10))):
        path.write_text(HEAD.replace('"k"', f'"{name}"') + f'"0x7f10","{"A" * size}","1","1","1"\n')
        assert len(read_ncu_csv(path)[0].rows) == 1  # 128 KiB: the most a field holds
    path.write_text(HEAD + row(0x7F00) + f'"0x7f10","{"A" * ((128 << 10) + 1)}","1","1","1"\n')
    with pytest.raises(ShmemError, match="not a CSV record Nsight Compute writes") as err:
        read_ncu_csv(path)
    assert err.value.line == 4
    assert len(err.value.message) < 300


def test_only_the_compared_kernels_rows_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "ncu.csv"
    other = HEAD.replace('"k"', '"other"') + "".join(row(0x7F00 + 16 * i) for i in range(1000))
    path.write_text(other + HEAD + row(0x7F00))
    tables = read_ncu_csv(path, lambda name: name == "k")
    assert [(t.kernel, len(t.rows)) for t in tables] == [("other", 0), ("k", 1)]


def test_rows_past_the_bound_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shmem_cli.trace.ncu import exports

    monkeypatch.setattr(exports, "MAX_ROWS", 100)
    path = tmp_path / "ncu.csv"
    path.write_text(HEAD + "".join(row(0x7F00 + 16 * i) for i in range(101)))
    with pytest.raises(ShmemError, match="more than 100 instruction rows") as err:
        read_ncu_csv(path)
    assert err.value.line == 103


def test_tables_of_the_compared_kernel_past_the_bound_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Empty tables (a "Kernel Name" line and a header, no row) pass the bound on rows: 2.1
    million of them took 30 s and 0.9 GiB."""
    from shmem_cli.trace.ncu import exports

    monkeypatch.setattr(exports, "MAX_TABLES", 3)
    path = tmp_path / "ncu.csv"
    path.write_text(HEAD.replace('"k"', '"other"') * 5 + HEAD * 3)
    assert len(read_ncu_csv(path, lambda name: name == "k")) == 4  # 3 of k, one name of other
    path.write_text(HEAD * 4)  # each table is two lines: the fourth begins at line 7
    with pytest.raises(ShmemError, match="more than 3 tables of the kernel compared") as err:
        read_ncu_csv(path, lambda name: name == "k")
    assert err.value.line == 7


def test_distinct_kernel_names_are_bounded_and_each_matched_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each distinct name is matched against the kernel once (about 6 MiB a second), and
    their characters are bounded: 2,000 names of 128 KiB took over a minute."""
    from shmem_cli.trace.ncu import exports, names

    calls: list[str] = []
    real = names.same_kernel
    monkeypatch.setattr(names, "same_kernel", lambda n, f: calls.append(n) or real(n, f))
    monkeypatch.setattr(exports, "MAX_NAME_CHARS", 100)
    a, b = "a" * 40, "b" * 40
    path = tmp_path / "ncu.csv"
    path.write_text("".join(HEAD.replace('"k"', f'"{n}"') for n in (a, a, b, a, b, b)))
    keep = names.matcher(("k",))
    assert [t.kernel for t in read_ncu_csv(path, keep)] == [a, b]  # names of others, once
    assert calls == [a, b]
    path.write_text("".join(HEAD.replace('"k"', f'"{n}"') for n in (a, b, a, "c" * 40)))
    with pytest.raises(ShmemError, match="more than 0 MiB of distinct kernel names") as err:
        read_ncu_csv(path, keep)
    assert err.value.line == 7  # 40 + 40 + 40 characters: the third name, the fourth table


def test_a_gzip_csv_is_not_quoted_under_its_error(tmp_path: Path) -> None:
    """Its lines are the unpacked text's: quoting the file's own bytes printed gzip data."""
    from shmem_cli.spec.source import error_sources

    path = tmp_path / "ncu.csv.gz"
    path.write_bytes(gzip.compress((HEAD + row(0x7F00, "nan")).encode()))
    with pytest.raises(ShmemError) as err:
        read_ncu_csv(path)
    assert err.value.line == 3
    assert error_sources(err.value) == {str(path): None}


def _bomb(tmp_path: Path, name: str, rows: int) -> Path:
    bomb = tmp_path / f"{name}.csv.gz"
    text = HEAD.replace('"k"', f'"{name}"') + row(0x7F00) * rows  # 84 bytes a row
    bomb.write_bytes(gzip.compress(text.encode(), 9))
    assert bomb.stat().st_size < 1 << 20
    return bomb


@needs_nvdisasm
@pytest.mark.parametrize(
    ("name", "rows", "said"),
    [
        # 126 MiB of another kernel's rows: read as they come, none kept
        ("other_kernel", 1_500_000, "no table of matmul_tiles"),
        # 176 MiB of the compared kernel's: refused past the bound of rows
        pytest.param("matmul_tiles", 2_200_000, "more than 1,000,000", marks=pytest.mark.slow),
    ],
)
@pytest.mark.slow
def test_a_gzip_bomb_of_rows_is_read_in_bounded_memory(
    tmp_path: Path, name: str, rows: int, said: str
) -> None:
    assert MAX_ROWS == 1_000_000
    bomb = _bomb(tmp_path, name, rows)
    ran = shmem("trace", str(ENTRY), "--grid", "1", "--compare", str(bomb), timeout=120)
    refused(ran, str(bomb), said, seconds=60)
    assert ran.peak_mib < PEAK_LIMIT_MIB


@needs_nvdisasm
def test_hostile_csvs_on_the_command_line(tmp_path: Path) -> None:
    inf = tmp_path / "inf.csv"
    inf.write_text(REAL.read_text().replace('"0","0","0","0",', '"1e309","0","0","0",', 1))
    ran = shmem("trace", str(ENTRY), "--grid", "1", "--compare", str(inf))
    assert ran.code in (1, 2) and "Traceback" not in ran.text


@pytest.mark.slow  # 10-12 s (4 million blank lines twice); the reader's other bounds stay fast
def test_records_past_the_bound_are_refused_blank_lines_included(tmp_path: Path) -> None:
    """256 MiB of blank lines (a 250 KiB gzip) took 100 s: one Python step a record."""
    from shmem_cli.trace.ncu import exports

    assert exports.MAX_RECORDS == 4_000_000
    path = tmp_path / "blank.csv.gz"
    text = HEAD + row(0x7F00) + "\n" * exports.MAX_RECORDS
    path.write_bytes(gzip.compress(text.encode(), 9))
    with pytest.raises(ShmemError) as err:
        read_ncu_csv(path)
    assert "holds more than 4,000,000 lines" in err.value.message
    assert err.value.line == exports.MAX_RECORDS + 1
    # the bound itself is a result: exactly MAX_RECORDS records are read
    path.write_bytes(gzip.compress((HEAD + row(0x7F00) + "\n" * (3_999_997)).encode(), 9))
    assert [t.kernel for t in read_ncu_csv(path)] == ["k"]


def test_distinct_kernel_names_are_bounded_by_count_too(tmp_path: Path) -> None:
    """1.3 million names of a few characters (28 MB) took 73 s to match, one by one; each
    distinct name is matched once (``keep``: counted), at most MAX_NAMES of them."""
    from shmem_cli.trace.ncu import exports

    assert exports.MAX_NAMES == 100_000
    asked: list[str] = []

    def keep(name: str) -> bool:
        asked.append(name)
        return name == "k"

    path = tmp_path / "names.csv"
    names = "".join(f'"Kernel Name","{i:x}"\n' for i in range(exports.MAX_NAMES - 1))
    path.write_text(HEAD + row(0x7F00) + names)  # "k" and 99,999 others: at the bound
    assert [t.kernel for t in read_ncu_csv(path, keep)] == ["k"]  # the others have no rows
    assert len(asked) == exports.MAX_NAMES
    asked.clear()
    path.write_text(HEAD + row(0x7F00) + names + '"Kernel Name","one more"\n')
    with pytest.raises(ShmemError) as err:
        read_ncu_csv(path, keep)
    assert "names more than 100,000 distinct kernel names" in err.value.message
    assert err.value.line == 3 + exports.MAX_NAMES
    assert len(asked) == exports.MAX_NAMES  # the one past the bound is never matched


def test_a_different_binary_quotes_the_csv_s_instructions_cut(tmp_path: Path) -> None:
    """A Source field of 60,000 characters was printed whole, five times."""
    from shmem_cli.render.trace.compare import SASS_SHOWN, render_compare_text
    from shmem_cli.trace.ncu.compare import KernelCompare

    theirs = "LDS R0, [" + "R1+" * 20_000 + "]"
    compare = KernelCompare("ncu.csv", "k", 1, 1, ((0, theirs, "LDS R0, [R1]"),) * 5, ())
    text = render_compare_text([compare])
    lines = text.splitlines()
    assert max(len(line) for line in lines) < 400
    shown = [line for line in lines if "ncu: " in line]
    assert len(shown) == 5
    assert all(f"ncu: {theirs[: SASS_SHOWN - 3]}...  |  cubin: LDS R0, [R1]" in s for s in shown)
