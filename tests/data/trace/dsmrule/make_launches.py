"""Write launches.json and inputs/*.bin: issue 29's DSMEM rule lab (kernels/dsmrule.cu,
dsmrule.sm_90a.cubin).

Every launch: 128 threads (4 warps) per CTA, two clusters; lane l of every warp takes entry l
of its pattern (inputs/PATTERN.bin: 32 pairs of little-endian int32, a byte offset or -1 for
a lane that does nothing, and a hop) and accesses byte warp * 1024 + offset of the CTA hop
ranks on. Usage: python3 make_launches.py > launches.json
"""

import json
import struct
from pathlib import Path

HERE = Path(__file__).resolve().parent
CUBIN = "dsmrule.sm_90a.cubin"
launches = []
patterns = {}


def pattern(name, entries):
    """Save a pattern: 32 (offset, hop) pairs; offsets stay within the warp's 1 KB."""
    assert len(entries) == 32
    for off, _hop in entries:
        assert off == -1 or 0 <= off < 1024, (name, off)
    patterns[name] = entries
    return name


def stride(width, words_or_bytes, hop=1, lanes=range(32), start=0):
    """Lane l at start + l * step bytes (active lanes only), all at one hop."""
    return [(start + lane * words_or_bytes if lane in lanes else -1, hop) for lane in range(32)]


def per_sector(words):
    """Lanes fill, in order, the given 4-byte words of sector 0, then of sector 1, ..."""
    out = []
    sector = 0
    while len(out) < 32:
        for w in words:
            if len(out) < 32:
                out.append((sector * 32 + 4 * w, 1))
        sector += 1
    return out


def launch(kernel, pat, cluster=2, mode=0, tag=""):
    lid = f"{kernel}_{pat}{tag}" + (f"_c{cluster}" if cluster != 2 else "")
    launches.append(
        {
            "id": lid,
            "cubin": CUBIN,
            "kernel": kernel,
            "block": [128, 1, 1],
            "grid": [2 * cluster, 1, 1],
            "cluster": [cluster, 1, 1],
            "dynamic_smem": 0,
            "args": [
                {"zeros": 4 * (1024 * 2 * cluster + 128 * 2 * cluster)},
                {"file": f"inputs/{pat}.bin"},
                {"int": mode},
            ],
            "dumps": [0],
        }
    )


# sub-word stores: bytes at byte strides 1, 2, 4, 32; half-words at 2, 4, 32
for b in (1, 2, 4, 32):
    launch("st8", pattern(f"b{b}", stride(1, b)))
for b in (2, 4, 32):
    launch("st16", pattern(f"b{b}", stride(2, b)))
# 4-byte stores: word strides 1 and 2 (measured before), 3, 4, 8
for w in (1, 2, 3, 4, 8):
    launch("st32", pattern(f"w{w}", stride(4, 4 * w)))
# which words of a sector are written (8 words a sector; lanes fill sector after sector)
SETS = {
    "s0to5": [0, 1, 2, 3, 4, 5],
    "s1to6": [1, 2, 3, 4, 5, 6],
    "s0to3": [0, 1, 2, 3],
    "s4to7": [4, 5, 6, 7],
    "s0": [0],
    "s0s7": [0, 7],
    "s0to2s4": [0, 1, 2, 4],
    "s0s2": [0, 2],
}
for name, words in SETS.items():
    launch("st32", pattern(name, per_sector(words)))
# runs that start inside a sector: 32 words from word 1 (5 sectors), lanes 0..3 from byte 0
# (one sector), from byte 24 (across a sector boundary), reversed lane order, partial warps
launch("st32", pattern("w1at4", stride(4, 4, start=4)))
launch("st32", pattern("l4at0", stride(4, 4, lanes=range(4))))
launch("st32", pattern("l4at24", stride(4, 4, lanes=range(4), start=24)))
launch("st32", pattern("rev", [((31 - lane) * 4, 1) for lane in range(32)]))
launch("st32", pattern("even", stride(4, 4, lanes=range(0, 32, 2))))
launch("st32", pattern("l16", stride(4, 4, lanes=range(16))))
launch("ld32", "l4at24")
launch("ld32", "even")
# wider stores
for w in (1, 2, 4):
    launch("st64", pattern(f"d{w}", stride(8, 8 * w)))
for w in (1, 2):
    launch("st128", pattern(f"q{w}", stride(16, 16 * w)))
# lanes of one warp on different ranks (clusters of 4): a quarter local, three remote CTAs,
# half local and half remote
launch("st32", pattern("hopl4", [(4 * lane, lane % 4) for lane in range(32)]), cluster=4)
launch("st32", pattern("hop1to3", [(4 * lane, 1 + lane % 3) for lane in range(32)]), cluster=4)
launch("st32", pattern("hophalf", [(4 * lane, lane // 16) for lane in range(32)]), cluster=4)
launch("st32", pattern("hop8s", [(4 * lane, 1 + (lane // 8) % 3) for lane in range(32)]), cluster=4)
launch("ld32", "hopl4", cluster=4)
launch("ld32", "hop1to3", cluster=4)
launch("ld32", "hophalf", cluster=4)
launch("atom32", "hop1to3", cluster=4)
# 32-bit atomics: word strides 1 (measured before), 2, 4, 8; 2, 4, 8 lanes a word; partial
for w in (1, 2, 4, 8):
    launch("atom32", f"w{w}")
for k in (2, 4, 8):
    launch("atom32", pattern(f"k{k}", [(4 * (lane // k), 1) for lane in range(32)]))
launch("atom32", pattern("k2w2", [(8 * (lane // 2), 1) for lane in range(32)]))
launch("atom32", "l4at0")
launch("atom32", "s0s7")
launch("red32", "w2")
launch("red32", "k4")
# 64-bit atomics and compare-and-swap
launch("atom64", "d1")
launch("atom64", "d2")
launch("atom64", pattern("dk2", [(8 * (lane // 2), 1) for lane in range(32)]))
launch("red64", "d1")
launch("cas32", "w1", mode=1, tag="_hit")
launch("cas32", "w1", mode=0, tag="_miss")
launch("cas32", pattern("one", [(0, 1)] * 32), mode=1, tag="_hit")
launch("cas64", "d1", mode=1, tag="_hit")
launch("cas64", "d1", mode=0, tag="_miss")


# a second round (the same day): what decides a whole sector's second transfer and the
# cost of whole sectors on other CTAs of a cluster of 4
def at(entries):
    """(offset, hop) per lane, -1 for lanes that do nothing."""
    return [entries.get(lane, (-1, 1)) for lane in range(32)]


# more than 16 lanes in one sector
launch("st8", pattern("b16l", stride(1, 1, lanes=range(16))))
launch("st8", pattern("b17l", stride(1, 1, lanes=range(17))))
launch("st8", pattern("pairs16", [(lane // 2, 1) for lane in range(32)]))
launch("st8", pattern("split2s", [(lane if lane < 16 else 32 + lane, 1) for lane in range(32)]))
launch("st16", pattern("h32in1", [(2 * (lane % 16), 1) for lane in range(32)]))
launch("st32", pattern("w4per", [(4 * (lane // 4), 1) for lane in range(32)]))
launch("st32", pattern("z0", [(0, 1)] * 32))


# whole-sector stores by 8 lanes to two sectors of one 128-byte line, one CTA
def two(a, b, gap_lanes=False):
    e = {}
    for i in range(8):
        e[i] = (32 * a + 4 * i, 1)
        e[(24 if gap_lanes else 8) + i] = (32 * b + 4 * i, 1)
    return at(e)


launch("st32", pattern("sec03", two(0, 3)))
launch("st32", pattern("sec02", two(0, 2)))
launch("st32", pattern("sec01", two(0, 1)))
launch("st32", pattern("sec03g", two(0, 3, True)))
launch("ld32", "sec03")
launch("ld32", "sec02")
# hop8s with its middle lanes idle, and its two middle groups alone
launch(
    "st32",
    pattern("hop8e", at({n: (4 * n, 1) for n in list(range(8)) + list(range(24, 32))})),
    cluster=4,
)
launch(
    "st32", pattern("hop8m", at({n: (4 * n, 2 if n < 16 else 3) for n in range(8, 24)})), cluster=4
)

# a third round: one whole sector alone, two, and half a sector, on each CTA of a cluster
# of 4 and of 2; a load, an 8-byte store and an atomic of a whole sector
for hop in (1, 2, 3):
    launch("st32", pattern(f"full{hop}", at({n: (4 * n, hop) for n in range(8)})), cluster=4)
    launch("st32", pattern(f"full2s{hop}", at({n: (4 * n, hop) for n in range(16)})), cluster=4)
    launch("st32", pattern(f"half{hop}", at({n: (4 * n, hop) for n in range(4)})), cluster=4)
    launch("ld32", f"full{hop}", cluster=4)
launch("st32", pattern("full1b", at({n: (4 * n, 1) for n in range(8)})), cluster=2)
launch("st64", pattern("dfull2", at({n: (8 * n, 2) for n in range(4)})), cluster=4)
launch("atom32", "full2", cluster=4)
FOURTH = len(launches)  # the fourth round's first launch (lab/run.sh: FIRST=92)


# a fourth round: is "the request writes other sectors of that CTA" counted per destination
# CTA, and what do lanes on one sector offset of two or three CTAs cost (clusters of 4)?
def fill(sector, hop, first_lane, words=range(8)):
    """Lanes from first_lane on, one a word, on the given words of a sector of CTA hop."""
    return {first_lane + i: (32 * sector + 4 * w, hop) for i, w in enumerate(words)}


def merge(*parts):
    e = {}
    for p in parts:
        assert not set(p) & set(e)
        e.update(p)
    return at(e)


def launch4(kernel, name, entries, cluster=4):
    launch(kernel, pattern(name, entries) if entries is not None else name, cluster=cluster)


HALF0, HALF1 = range(4), range(4, 8)
# the other sector on another CTA: a half, or words 0 and 7 (both halves, a gap)
launch4("st32", "x_fh", merge(fill(0, 1, 0), fill(1, 2, 8, HALF0)))
launch4("st32", "x_fg", merge(fill(0, 1, 0), fill(1, 2, 8, [0, 7])))
# one sector offset on two CTAs: filled on both (lanes grouped, the second CTA's first,
# interleaved one lane and four lanes at a time), filled and half, half and other half
launch4("st32", "s_ff", merge(fill(0, 1, 0), fill(0, 2, 8)))
launch4("st32", "s_ffr", merge(fill(0, 2, 0), fill(0, 1, 8)))
launch4("st32", "s_ffi", at({n: (4 * (n // 2), 1 + n % 2) for n in range(16)}))
FOURS = {n: (4 * (n % 4 + 4 * (n // 8)), 1 + (n // 4) % 2) for n in range(16)}  # 4 lanes a CTA
launch4("st32", "s_ffi4", at(FOURS))
launch4("st32", "s_fh", merge(fill(0, 1, 0), fill(0, 2, 8, HALF0)))
launch4("st32", "s_hf", merge(fill(0, 2, 0, HALF0), fill(0, 1, 4)))
launch4("st32", "s_hh", merge(fill(0, 1, 0, HALF0), fill(0, 2, 4, HALF1)))
launch4("st32", "s_hhi", at({n: (4 * n, 1 + n % 2) for n in range(8)}))
# two sectors filled on each of two CTAs, grouped and interleaved; one offset on three CTAs;
# two sectors on one CTA and one of them on another
launch4("st32", "s_ff2", merge(fill(0, 1, 0), fill(0, 2, 8), fill(1, 1, 16), fill(1, 2, 24)))
launch4("st32", "s_ff2i", at({n: (4 * (n // 2), 1 + n % 2) for n in range(32)}))
launch4("st32", "s_fff", merge(fill(0, 1, 0), fill(0, 2, 8), fill(0, 3, 16)))
launch4("st32", "s_f2f", merge(fill(0, 1, 0), fill(1, 1, 8), fill(0, 2, 16)))
# one CTA: a filled sector beside lanes on the CTA's own memory, beside a half, beside words
# 0 and 7, beside a filled sector of the next 128-byte line and of the warp's last line
launch4("st32", "c_fl", merge(fill(0, 1, 0), fill(1, 0, 8)))
launch4("st32", "c_fh", merge(fill(0, 1, 0), fill(1, 1, 8, HALF0)))
launch4("st32", "c_fg", merge(fill(0, 1, 0), fill(1, 1, 8, [0, 7])))
launch4("st32", "c_f4", merge(fill(0, 1, 0), fill(4, 1, 8)))
launch4("st32", "c_f31", merge(fill(0, 1, 0), fill(31, 1, 8)))
# hops 1 and 3 in a cluster of 2: one destination CTA
launch4("st32", "c_h13", merge(fill(0, 1, 0), fill(1, 3, 8)), cluster=2)
# the same offset on two CTAs loaded, and stored 8 bytes a lane
launch4("ld32", "s_ff", None)
launch4("st64", "s_dff", at({n: (8 * (n % 4), 1 + n // 4) for n in range(8)}))
(HERE / "inputs").mkdir(exist_ok=True)
for name, entries in patterns.items():
    (HERE / "inputs" / f"{name}.bin").write_bytes(
        b"".join(struct.pack("<ii", off, hop) for off, hop in entries)
    )
ids = [L["id"] for L in launches]
assert len(ids) == len(set(ids)), ids
print(json.dumps({"launches": launches}, indent=1))
