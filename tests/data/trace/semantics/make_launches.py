"""Write launches.json for the single-instruction probes (issues 27 and 30).

Usage: python3 tests/data/trace/semantics/make_launches.py
kernels/sem_masked.cu: guarded (predicated) shared instructions in warps with no lane, some
lanes or every lane on, partial warps and warps whose other lanes exited; the pm_ kernels take
(out, m0..m3, x0..x3, stride). kernels/sem_atomics.cu: one native shared atomic per kernel in
12 places (addresses and lanes), (out, one, u). Every launch is made twice (the second's id
ends in _r2): a count that is a rule reads the same in both.
"""

import json
from pathlib import Path

here = Path(__file__).parent
ON = 0xFFFFFFFF
launches: list[dict[str, object]] = []


def i32(x: int) -> int:
    """The harness passes ints: a 32-bit mask as the signed int of its bits."""
    return x - (1 << 32) if x >= 1 << 31 else x


def launch(id_: str, source: str, kernel: str, threads: int, args: list[int], out: int) -> None:
    launches.append(
        {
            "id": id_,
            "source": f"kernels/{source}",
            "kernel": kernel,
            "block": [threads, 1, 1],
            "grid": [1, 1, 1],
            "dynamic_smem": 0,
            "args": [{"zeros": out}, *(i32(a) for a in args)],
            "mangled": kernel,
        }
    )


# (name, threads, predicate masks per warp, exit masks per warp); ldmatrix and stmatrix see
# each warp with all of its lanes on or none (a partial warp is left to the last launches)
CONFIGS = [
    ("off_t32", 32, [0], [0]),  # one warp, no lane on
    ("on_t32", 32, [ON], [0]),  # one warp, every lane on
    ("onoff_t64", 64, [ON, 0], [0, 0]),  # warp 1 has no lane on
    ("mix_t128", 128, [ON, 0, 0, ON], [0, 0, 0, 0]),  # warps 1 and 2 have no lane on
    ("off_t128", 128, [0, 0, 0, 0], [0, 0, 0, 0]),  # four warps, no lane on
    ("partial_t48", 48, [ON, 0], [0, 0]),  # warp 1: 16 threads, none on
    ("exit_t64", 64, [ON, 0xFFFF0000], [0, 0xFFFF0000]),  # warp 1: 16-31 exited, 0-15 off
    ("exit1_t64", 64, [0, ON], [0xFFFFFFFE, 0]),  # warp 0: 1-31 exited, lane 0 off
]
# the atomics (branched around by ptxas) also with some lanes of a warp on
LANES = [
    ("lanes_t128", 128, [0x1, 0, 0xFFFF0000, 0], [0, 0, 0, 0]),
    ("exitpart_t64", 64, [ON, 0xFFFF0000], [0x0000FFFF, 0xFFFF0000]),
]
for kernel in ("pm_loads", "pm_stores", "pm_stores2", "pm_atoms"):
    for name, threads, m, x in CONFIGS + (LANES if kernel == "pm_atoms" else []):
        m4, x4 = (m + [0] * 4)[:4], (x + [0] * 4)[:4]
        launch(f"{kernel[3:]}_{name}", "sem_masked.cu", kernel, threads, [*m4, *x4, 1], 4 * 128)
# the predicate from the parameters only: bit k guards the k-th instruction
for name, threads, flags in (("uoff_t32", 32, 0), ("uoff_t64", 64, 0), ("uon_t64", 64, 31)):
    launch(name, "sem_masked.cu", "pm_uniform", threads, [flags, 1], 4 * 128)

ATOMICS = [
    "add_v", "add_v_red", "add_c5", "add_c5_red", "add_c1", "add_c1_red",
    "and_v", "or_v", "or_c", "xor_v", "min_s", "max_s", "min_u", "max_u",
    "inc", "dec", "exch", "cas", "exch64", "cas64", "exch128", "cas128",
]  # fmt: skip
# four warps for some of them (the counts per warp add up, or they do not)
FOUR = {"add_v", "add_c5", "and_v", "min_s", "inc", "exch", "cas", "exch64", "cas64", "cas128"}
for op in ATOMICS:
    for threads in (32, 128) if op in FOUR else (32,):
        launch(f"sa_{op}_t{threads}", "sem_atomics.cu", f"sa_{op}", threads, [1, 7], 8 * 128)
launches += [dict(x, id=f"{x['id']}_r2") for x in launches]
# last: ldmatrix/stmatrix with only some lanes of a warp on (undefined in PTX; if the GPU
# faulted, every launch before these would still have been counted)
for kernel in ("pm_loads", "pm_stores2"):
    for rep in ("", "_r2"):
        m4 = [0x1, 0, 0xFFFF0000, 0]
        launch(
            f"{kernel[3:]}_lanes_t128{rep}", "sem_masked.cu", kernel, 128, [*m4, 0, 0, 0, 0, 1], 512
        )
(here / "launches.json").write_text(json.dumps({"launches": launches}, indent=1) + "\n")
print(len(launches), "launches")

# second round (uniform/): the atomics on an address the compiler knows is one word
uniform: list[dict[str, object]] = []
for op in (
    "add_v", "add_v_red", "and_v", "or_v", "xor_v", "min_s", "max_s", "min_u", "max_u",
    "inc", "dec", "exch", "cas", "exch64", "cas64",
):  # fmt: skip
    for threads in (32, 64):
        uniform.append(
            {
                "id": f"su_{op}_t{threads}",
                "source": "kernels/sem_uniform.cu",
                "kernel": f"su_{op}",
                "block": [threads, 1, 1],
                "grid": [1, 1, 1],
                "dynamic_smem": 0,
                "args": [{"zeros": 8 * 64}, 1],
                "mangled": f"su_{op}",
            }
        )
uniform += [dict(x, id=f"{x['id']}_r2") for x in uniform]
(here / "uniform" / "launches.json").write_text(json.dumps({"launches": uniform}, indent=1) + "\n")
print(len(uniform), "launches in uniform/")
