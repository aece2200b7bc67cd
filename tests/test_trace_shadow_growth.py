"""Undescribed global memory touched in order costs linear time and counts real memory once
(issues 29/30): a kernel writing through an output it was given only a real pointer to, or
many adjacent ``--memory`` ranges, grow one shadow region segment by segment.

Every expected figure is the pattern's own arithmetic: n pages written are n * 4096 real
bytes, each byte reads back what was stored, and bytes never stored read as untouched.
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from shmem_cli.cli import main
from shmem_cli.cuda.sass import Instruction
from shmem_cli.trace.emulator.global_memory import MAX_SHADOW_BYTES, PAGE, SEGMENT, GlobalMemory

from .conftest import TRACE_DATA, needs_nvdisasm

INS = Instruction(0x40, None, "STG", ("E",), (), "k.cu", 7, "STG.E [R2.64], R5")
REAL = 0x7F43_1200_0000  # a device pointer of a real run
#: the arena laid out for a region may be at most this many times the span it covers
ROOM = 8


def _pattern(address: int) -> np.ndarray:
    """What the test stores in the page at ``address``: a byte ramp that starts at a value
    of the page's own (so that a page copied to the wrong place is caught)."""
    return ((address // PAGE * 7 + np.arange(PAGE)) % 251).astype(np.uint8)


def _store(m: GlobalMemory, address: int) -> None:
    off = int(m.store_offsets(np.array([address], dtype=np.int64), PAGE, INS)[0])
    m.data[off : off + PAGE] = _pattern(address)


def _reads_back(m: GlobalMemory, pages: list[int]) -> bool:
    addr = np.array(pages, dtype=np.int64)
    off = m.offsets(addr, PAGE, INS)
    got = m.data[off[:, None] + np.arange(PAGE)]
    want = np.stack([_pattern(a) for a in pages])
    return bool(np.array_equal(got, want)) and not np.any(m.untouched_taint(off, PAGE))


def _span(m: GlobalMemory) -> int:
    return sum(s.size for s in m.shadows)


@pytest.mark.slow
def test_64_mib_written_in_order_is_64_mib_real() -> None:
    m = GlobalMemory()
    pages = [REAL + k * PAGE for k in range((64 << 20) // PAGE)]
    for a in pages:
        _store(m, a)
    assert m.written_bytes == 64 << 20  # each page once, however often the region moved
    assert m.shadow_summary() == ("0x7f4312000000 (65,536 KiB)",)
    off = m.offsets(np.array(pages, dtype=np.int64), PAGE, INS)
    assert np.array_equal(off, off[0] + PAGE * np.arange(len(pages)))  # one contiguous run
    for k in range(0, len(pages), 256):  # every byte, 1 MiB at a time
        got = m.data[off[k] : off[k] + 256 * PAGE].reshape(256, PAGE)
        assert np.array_equal(got, np.stack([_pattern(a) for a in pages[k : k + 256]]))
    assert m.reserved_bytes <= ROOM * _span(m)


def test_a_region_written_upward_then_downward_keeps_every_page() -> None:
    m = GlobalMemory()
    up = [REAL + k * PAGE for k in range(16 * SEGMENT // PAGE)]  # 1 MiB upward
    down = [REAL - PAGE - k * PAGE for k in range(16 * SEGMENT // PAGE)]  # 1 MiB downward
    for a in up:
        _store(m, a)
    for a in down:
        _store(m, a)
    assert m.written_bytes == 2 * 16 * SEGMENT
    assert m.shadow_summary() == ("0x7f4311f00000 (2,048 KiB)",)
    assert _reads_back(m, up + down)
    assert m.reserved_bytes <= ROOM * _span(m)
    # the word past the top was never written: untouched, flagged
    past = m.offsets(np.array([REAL + 16 * SEGMENT], dtype=np.int64), 4, INS)
    assert list(m.untouched_taint(past, 4)) == [2]


def test_two_interleaved_streams_and_two_that_meet() -> None:
    m = GlobalMemory()
    far = 1 << 30
    first = [REAL + k * PAGE for k in range(16 * SEGMENT // PAGE)]
    second = [REAL + far + k * PAGE for k in range(16 * SEGMENT // PAGE)]
    for a, b in zip(first, second, strict=True):
        _store(m, a)
        _store(m, b)
    assert len(m.shadows) == 2 and m.written_bytes == 2 * 16 * SEGMENT
    assert _reads_back(m, first + second)
    assert m.reserved_bytes <= ROOM * _span(m)
    # a third stream from 1 MiB below the second, upward, meets it: one region, nothing lost
    third = [REAL + far - 16 * SEGMENT + k * PAGE for k in range(16 * SEGMENT // PAGE)]
    for a in third:
        _store(m, a)
    assert len(m.shadows) == 2 and m.written_bytes == 3 * 16 * SEGMENT
    assert _reads_back(m, first + second + third)
    assert m.reserved_bytes <= ROOM * _span(m)


def test_room_to_grow_ends_at_the_undescribed_limit() -> None:
    m = GlobalMemory()
    m.offsets(np.array([REAL], dtype=np.int64), 15 << 30, INS)  # one read that wide
    m.store_offsets(np.array([REAL + (15 << 30)], dtype=np.int64), 4, INS)  # grows: it moves
    assert m.shadow_summary() == ("0x7f4312000000 (15,728,704 KiB)",)
    assert m.written_bytes == PAGE
    # the first slot (15 GiB) and the second: 15 GiB + 64 KiB and, on either side, what the
    # 16 GiB leave (1 GiB - 64 KiB), not its span again
    assert m.reserved_bytes <= 2 * MAX_SHADOW_BYTES


def test_1024_adjacent_given_ranges_make_1024_pages_real() -> None:
    m = GlobalMemory()
    for k in range(1024):
        m.preload(REAL + k * SEGMENT, int(k + 1).to_bytes(4, "little"), "--memory")
    assert m.written_bytes == 1024 * PAGE  # each 4-byte range in a page of its own
    assert m.shadow_summary() == ("0x7f4312000000 (65,536 KiB)",)
    addr = REAL + SEGMENT * np.arange(1024, dtype=np.int64)
    off = m.offsets(addr, 4, INS)
    assert list(m.data[off[:, None] + np.arange(4)].view("<u4").ravel()) == list(range(1, 1025))
    assert not np.any(m.untouched_taint(off, 4))
    assert m.reserved_bytes <= ROOM * _span(m)


@needs_nvdisasm
@pytest.mark.slow
def test_1024_adjacent_memory_ranges_trace() -> None:
    """The launch of the report: 1,024 ranges of 4 bytes, one per 64 KiB (it stopped at the
    256 MiB of real memory though 4 KiB were given)."""
    ranges = [f"--memory={REAL + k * SEGMENT:#x}=int:1" for k in range(1024)]
    cubin = TRACE_DATA / "grouped" / "grouped.sm_90.cubin"
    res = CliRunner().invoke(main, ["trace", str(cubin), "-b", "64", "-g", "4", *ranges])
    assert res.exit_code == 0, res.output
    assert "0x7f4312000000 (65,536 KiB)" in res.output


def test_written_marks_are_exact_to_the_byte() -> None:
    """One bit a byte: a 1-byte store, and a 13-byte range from an odd address, mark those
    bytes and not their neighbours (the marks of a byte share a mark byte with seven others)."""
    m = GlobalMemory()
    m.store_offsets(np.array([REAL + 3], dtype=np.int64), 1, INS)
    m.preload(REAL + 4 * PAGE + 5, bytes(range(1, 14)), "--memory")  # bytes 5 to 17
    for first, width, untouched in [
        (3, 1, False),
        (2, 1, True),
        (4, 1, True),
        (0, 8, True),  # 0..7 holds the written byte 3 and seven never written
        (4 * PAGE + 5, 13, False),
        (4 * PAGE + 4, 1, True),
        (4 * PAGE + 18, 1, True),
        (4 * PAGE + 8, 8, False),  # a whole mark byte inside the range
    ]:
        off = m.offsets(np.array([REAL + first], dtype=np.int64), width, INS)
        assert bool(np.any(m.untouched_taint(off, width))) == untouched, (first, width)


@pytest.mark.slow
def test_growing_and_moving_keep_what_was_written_past_one_copy_chunk() -> None:
    """A 40 MiB range (more than the 16 MiB an arena copies at a time) given, then a region
    below it that grows into it: every byte moves with its mark, counted once."""
    data = (np.arange(40 << 20) % 253).astype(np.uint8).tobytes()
    m = GlobalMemory()
    m.preload(REAL + SEGMENT, data, "--memory")
    for k in range(SEGMENT // PAGE):  # the segment just below, page by page: it joins
        _store(m, REAL + k * PAGE)
    assert m.shadow_summary() == (f"0x{REAL:x} ({(40 << 10) + 64:,} KiB)",)
    assert m.written_bytes == (40 << 20) + SEGMENT
    off = m.offsets(np.array([REAL + SEGMENT], dtype=np.int64), 1, INS)[0]
    assert m.data[off : off + len(data)].tobytes() == data
    assert not np.any(m.untouched_taint(off + np.arange(0, 40 << 20, 4093), 1))
    assert _reads_back(m, [REAL + k * PAGE for k in range(SEGMENT // PAGE)])
