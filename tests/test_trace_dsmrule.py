"""Issue 29's DSMEM cost rule, measured beyond one pattern (tests/data/trace/dsmrule, the
project's own kernels/dsmrule.cu, 62 + 15 + 15 + 22 launches on the H200, each counted
twice): sub-word, 8- and 16-byte stores, which bytes of a sector a store writes, runs that
start inside a sector, partial warps, lanes on several CTAs, one sector offset stored to on
two or three CTAs, filled sectors in one 128-byte line or two, atomics at strides and with
several lanes a word, 64-bit atomics, compare-and-swap, ``red`` against ``atom``.

The rule (docs/hardware-model.md, 9d) is written out here once more, lane by lane, apart
from shmem's :mod:`shmem_cli.hardware.dsmem`, and checked against every launch; then every
launch is traced and its crossbar sectors, dshared instruction counts, shared wavefronts and
output compared with the measured ones.
"""

from __future__ import annotations

import json
import struct

import pytest

from . import hopper_lab as lab
from .conftest import TRACE_DATA, fast_few, needs_nvdisasm

DATA = TRACE_DATA / "dsmrule"
LAUNCHES = {L["id"]: L for L in json.loads((DATA / "launches.json").read_text())["launches"]}
LAB = {m["id"]: m for m in json.loads((DATA / "measured.json").read_text())["launches"]}
WIDTH = {"st8": 1, "st16": 2, "st32": 4, "st64": 8, "st128": 16, "ld32": 4, "atom32": 4,
         "red32": 4, "atom64": 8, "red64": 8, "cas32": 4, "cas64": 8}  # fmt: skip
XBAR = "l1tex__m_xbar2l1tex_read_sectors_mem_dshared"
# the launches the rule misses (docs/hardware-model.md, 10): (the rule's sectors, the
# H200's), the whole launch; none since the fourth round
OPEN: dict[str, tuple[int, int]] = {}


def pattern(lid: str) -> list[tuple[int, int]]:
    """The launch's 32 (byte offset or -1, hop) pairs, one per lane of every warp."""
    data = (DATA / LAUNCHES[lid]["args"][1]["file"]).read_bytes()
    return [struct.unpack_from("<ii", data, 8 * lane) for lane in range(32)]


def rule_per_request(lid: str) -> int:
    """The sectors one warp request moves, by the rule, lane by lane."""
    kernel = LAUNCHES[lid]["kernel"]
    width = WIDTH[kernel]
    cluster = LAUNCHES[lid]["cluster"][0]  # hop: the destination that many ranks on
    lanes = [(hop % cluster, off) for off, hop in pattern(lid) if off >= 0 and hop % cluster]
    by_sector: dict[tuple[int, int], list[int]] = {}
    for hop, off in lanes:
        by_sector.setdefault((hop, off // 32), []).append(off)
    if kernel.startswith("ld"):
        return len(by_sector)
    if kernel.startswith(("atom", "red", "cas")):
        total = 0
        for offs in by_sector.values():
            total += 2 * max(offs.count(o) for o in offs)
        return total
    written = {key: {o + i for o in offs for i in range(width)} for key, offs in by_sector.items()}
    filled = [key for key, w in written.items() if len(w) == 32]
    total = 0
    for (hop, sector), w in written.items():
        halves = {byte // 16 for byte in w}
        # another filled sector of that CTA in the same 128-byte line (4 sectors)
        paired = len(w) == 32 and any(
            h == hop and s != sector and s // 4 == sector // 4 for h, s in filled
        )
        total += 1 if paired or len(halves) == 1 else 2
    return total


def requests(lid: str) -> int:
    """Warp requests with a remote lane: every warp of every CTA."""
    L = LAUNCHES[lid]
    return L["grid"][0] * L["block"][0] // 32


def test_the_lab_was_measured_twice_and_alike() -> None:
    assert set(LAB) == set(LAUNCHES)
    for m in LAB.values():
        assert m["measured_twice"], m["id"]
        differs = set(m["repeat_differs"]) - {
            "l1tex__m_l1tex2xbar_req_cycles_active_mem_dshared",
            "l1tex__data_bank_conflicts_type_arbitration",
        }
        assert not differs, (m["id"], differs)


@pytest.mark.parametrize("lid", sorted(LAUNCHES))
def test_the_rule_on_every_launch(lid: str) -> None:
    """The rule, worked out per lane here, against the crossbar sectors the H200 counted
    (read and write sectors are equal in every launch)."""
    c = LAB[lid]["counters"]
    assert c[XBAR] == c["l1tex__m_l1tex2xbar_write_sectors_mem_dshared"]
    rule = rule_per_request(lid) * requests(lid)
    assert (rule, c[XBAR]) == OPEN.get(lid, (c[XBAR], c[XBAR]))


def test_a_stores_second_sector_is_not_counted_as_a_store() -> None:
    """The per-op crossbar counter of a store holds one sector per sector written; only the
    total holds the second of a sector written in both halves with gaps."""
    c = LAB["st32_w2"]["counters"]
    assert c[f"{XBAR}_op_st"] * 2 == c[XBAR] == 16 * requests("st32_w2")
    c = LAB["st32_s0s2"]["counters"]  # words 0 and 2: one half, gaps and all
    assert c[f"{XBAR}_op_st"] == c[XBAR] == 16 * requests("st32_s0s2")


REMOTE = ("LD.E", "ST.E", "ATOM.E", "@P2 ST.E")
SHARED = ("LDS", "STS", "ATOMS", *REMOTE)


def _sass(i: dict[str, object]) -> str:
    return " ".join(str(i["sass"]).split())


def _measured_rows(lid: str) -> dict[int, tuple[int, int]]:
    """pc -> (warp executions, shared wavefronts) of every shared instruction measured (a
    remote one only where some lanes reached the CTA's own memory: it has wavefronts)."""
    rows = {}
    for i in LAB[lid]["instructions"]:
        executed, wavefronts = i["Instructions Executed"], i["L1 Wavefronts Shared"]
        local = wavefronts or not _sass(i).startswith(REMOTE)
        if _sass(i).startswith(SHARED) and executed and local:
            rows[i["pc"]] = (executed, wavefronts)
    return rows


@needs_nvdisasm
@pytest.mark.parametrize("lid", fast_few(sorted(LAUNCHES)))
def test_dsmrule_lab_as_measured(lid: str) -> None:
    """Every value each launch wrote; every shared instruction's executions and wavefronts
    (lanes on the CTA's own memory are ordinary shared lanes); the remote instructions
    listed with Nsight's dshared counts and the crossbar sectors (the rule's, for the
    launches it misses)."""
    kt, out = lab.run(lid, DATA)
    gpu = (DATA / "outputs" / f"{lid}.arg0.bin").read_bytes()
    traced, measured_words = (_words(b) for b in (out[0], gpu))
    raced = _raced_words(lid)
    for i, (mine, theirs) in enumerate(zip(traced, measured_words, strict=True)):
        if i in raced:  # either CTA's store may land last: the H200's order varies by warp
            assert {mine, theirs} <= raced[i], (lid, i, mine, theirs, raced[i])
        else:
            assert mine == theirs, (lid, i, mine, theirs)
    got = {
        a.pc: (a.cost.requests + a.predicated_off, a.cost.wavefronts)
        for a in kt.accesses
        if (a.cost.requests + a.predicated_off and a.sass.startswith(("LDS", "STS", "ATOMS")))
        or a.cost.wavefronts
    }
    assert got == _measured_rows(lid)
    c = LAB[lid]["counters"]
    dshared = sum(
        c.get(f"smsp__sass_inst_executed_op_dshared_{op}") or 0 for op in ("ld", "st", "atom")
    )
    remote = [n for n in kt.not_modelled if n.dsmem_sectors is not None]
    assert sum(n.executions for n in remote) == dshared
    assert sum(n.dsmem_sectors or 0 for n in remote) == OPEN.get(lid, (c[XBAR],))[0]
    # a remote atomic's op_atom wavefronts: Nsight's op_atom less the local atomics' own
    atom = c.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom") or 0
    assert kt.dsmem.wavefronts == atom - kt.totals["atomic"].wavefronts
    # op_misc: the warps' ends and the cluster barriers' MEMBAR.ALL.GPU (hardware-model 9e)
    assert kt.misc.wavefronts == c["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc"]


def _words(data: bytes) -> tuple[int, ...]:
    return struct.unpack(f"<{len(data) // 4}I", data)


def _raced_words(lid: str) -> dict[int, set[int]]:
    """The output words that lanes of more than one CTA store to (the fourth round's one
    sector offset on two or three CTAs), each with the values that may land there: per
    storing CTA, its lowest lane's (where lanes of one warp store to one place the lowest
    lane's value lands, hardware-model 9d)."""
    L = LAUNCHES[lid]
    if L["kernel"] not in ("st32", "st64"):
        return {}
    n, ctas, warps = L["cluster"][0], L["grid"][0], L["block"][0] // 32
    stores: dict[int, dict[int, int]] = {}  # word -> storing CTA -> its lowest lane's value
    for cta in range(ctas):
        for warp in range(warps):
            for lane, (off, hop) in enumerate(pattern(lid)):
                if off < 0:
                    continue
                dest = cta - cta % n + (cta % n + hop) % n
                word = dest * 1024 + warp * 256 + off // 4
                values = [lane + 7] if L["kernel"] == "st32" else [lane + 7, lane + 9]
                for k, value in enumerate(values):
                    stores.setdefault(word + k, {}).setdefault(cta, value)
    return {w: set(by.values()) for w, by in stores.items() if len(by) > 1}


def test_the_lab_folder_says_how_it_was_measured() -> None:
    text = (DATA / "README.md").read_text()
    for name in ("kernels/dsmrule.cu", "make_launches.py", "lab/run.sh", "lab/parse_ncu.py"):
        assert name in text
        assert (DATA / name).is_file()


def test_store_sectors_by_the_bytes_written() -> None:
    """shmem's rule on hand-made lanes (one warp, one destination CTA's offsets)."""
    from shmem_cli.hardware.dsmem import sectors

    def st(offsets: list[int], width: int = 4) -> int:
        return int(sectors([0] * len(offsets), offsets, width, "st"))

    assert st([0, 8]) == 1  # words 0 and 2: a gap, one half
    assert st([0, 28]) == 2  # words 0 and 7: both halves
    assert st([4 * w for w in range(1, 7)]) == 2  # words 1-6: one run, both halves
    assert st([4 * w for w in range(8)]) == 2  # the whole sector, alone
    assert st([16, 20, 24, 28]) == 1  # the second half
    assert st([24, 28, 32, 36]) == 2  # across a sector boundary: a half in each
    assert st([0, 16], width=8) == 2  # 8-byte stores at stride 16
    assert st([0, 32], width=16) == 2  # 16-byte stores at stride 32: a half of two sectors
    assert st(list(range(0, 64, 2)), width=2) == 2  # half-words filling two sectors
    assert st([0] * 32) == 1  # 32 lanes on one word

    assert st(list(range(32)), width=1) == 2  # one sector filled, the CTA's only one
    assert st(list(range(16)), width=1) == 1  # one half
    assert st([lane // 2 for lane in range(32)], width=1) == 1  # 32 lanes, one half
    assert st(list(range(64)), width=1) == 2  # two sectors filled: 1 each
    assert st([4 * w for w in range(8)] + [40]) == 3  # a filled sector and a word: 2 + 1
    assert st([4 * w for w in range(8)] + [4 * w for w in range(32, 40)]) == 4  # two lines
    assert st([4 * w for w in range(8)] + [4 * w for w in range(24, 32)]) == 2  # one line
