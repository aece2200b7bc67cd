"""The cp.async rule (shmem_cli/hardware/async_copy.py) against the H200 measurements.

Each ``cp_async_pattern<BYTES, CG, MODE, SS, GS, ZFILL>`` launch of
tests/data/trace/kernels/cp_async.cu copies, in lane t, BYTES from global slot ``t*GS`` to
shared slot ``t*SS`` (MODE 0), ``(t%8)*SS + t/8`` (MODE 1) or ``(t/4)*SS + t%4`` (MODE 2);
ZFILL 1 zero-fills odd lanes, ZFILL 2 copies ``size`` source bytes in every lane. The
addresses below are derived from that source by hand (the static array starts at the
0x400 reserved offset of the shared window, a 1024-byte aligned address), not traced.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from shmem_cli.hardware.arch import SM90
from shmem_cli.hardware.async_copy import async_copy_stats

from .conftest import TRACE_DATA as DATA

MEASURED = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
PATTERN = re.compile(r"cp_pattern_(\d+)_(c[ag])_m(\d)_s(\d+)_g(\d+)_z(\d)_t(\d+)_n(\d+)")
COPY = re.compile(r"cp_async_copy_(\d+)_(\d+)")
# scattered .ca copies (every lane its own global line, stride no power of two): the
# hardware takes more than the rule says; kept visible here, documented in the module
BEYOND_RULE = {  # what the H200 measured (the rule says less)
    "cp_pattern_4_ca_m1_s129_g33_z0_t64_n4": 17,
    "cp_pattern_8_ca_m0_s1_g17_z0_t64_n8": 20,
    "cp_pattern_16_ca_m0_s1_g9_z0_t64_n16": 27,
}


def _case(name: str) -> tuple[int, bool, int, int, int, int, int, int]:
    if m := PATTERN.fullmatch(name):
        b, cg, mode, ss, gs, zf, threads, size = m.groups()
        return int(b), cg == "cg", int(mode), int(ss), int(gs), int(zf), int(threads), int(size)
    m = COPY.fullmatch(name)
    assert m is not None
    b, ss = int(m.group(1)), int(m.group(2))
    return b, False, 0, ss, 1, 0, 64, b


def _predict(name: str) -> int:
    size, bypass, mode, ss, gs, zfill, threads, n = _case(name)
    t = np.arange(threads, dtype=np.int64)
    slot = [t * ss, (t % 8) * ss + t // 8, (t // 4) * ss + t % 4][mode]
    shared = (0x400 + slot * size).reshape(-1, 32)
    global_ = (0x7F0000000000 + t * gs * size).reshape(-1, 32)
    src = [np.full(threads, size), np.where(t & 1, 0, size), np.full(threads, n)][zfill]
    # a bypass lane that fills any of its bytes with zeros writes through the pipe
    copies = (src > 0) if not bypass else (src == size)
    active = np.ones(shared.shape, dtype=bool)
    stats = async_copy_stats(shared, global_, active, copies.reshape(-1, 32), size, bypass, SM90)
    return int(stats.wavefronts.sum())


CASES = sorted(k for k in MEASURED if PATTERN.fullmatch(k) or COPY.fullmatch(k))


def test_the_corpus_has_the_cases() -> None:
    assert len(CASES) == 54


@pytest.mark.parametrize("name", CASES)
def test_async_copy_wavefronts_match_the_h200(name: str) -> None:
    measured = MEASURED[name]["per_op"]["ldgsts"]["wavefronts"]
    if name in BEYOND_RULE:
        # the known gap: the hardware takes more than the rule, never less
        assert measured == BEYOND_RULE[name]
        assert 0 < _predict(name) < measured
    else:
        assert _predict(name) == measured


def test_line_limit_alone_sets_the_cost() -> None:
    # 32 lanes, each its own line at a 132-byte stride: no bank is shared on either
    # side, yet a wavefront serves at most 4 lines: 8 wavefronts
    t = np.arange(32, dtype=np.int64)[None, :]
    stats = async_copy_stats(
        0x400 + 4 * t, 132 * t, np.ones((1, 32), bool), np.ones((1, 32), bool), 4, False, SM90
    )
    assert stats.wavefronts.tolist() == [8]
    assert stats.ideal.tolist() == [1]
