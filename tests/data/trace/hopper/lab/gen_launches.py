"""Write launches.json and inputs/ for the Hopper lab: the wgmma probes (every form of
kernels/wgmma_probe.cu on canonical descriptors of every swizzle mode, and on non-canonical
ones), the TMA probes, the pipeline and the cluster kernels.

Descriptor fields (PTX ISA, "Matrix Descriptor Format"): bits 0-13 start address >> 4,
16-29 leading byte offset >> 4, 32-45 stride byte offset >> 4, 49-51 base offset,
62-63 layout (0 interleave / no swizzle, 1 128B, 2 64B, 3 32B swizzle). The kernels add the
buffer's shared address >> 4, so the start here is an offset inside the buffer.
Usage: python3 gen_launches.py   (from lab/; writes ../launches.json and ../inputs/)
"""

import json
import random
import struct
from pathlib import Path

import gen_wgmma as G

HERE = Path(__file__).resolve().parent.parent
SWZ_BYTES = {0: 16, 3: 32, 2: 64, 1: 128}  # layout code -> swizzle width (16 = none)
A_AT, B_AT = 0, 16384


def desc(start, lbo, sbo, layout, base=0):
    return (
        ((start >> 4) & 0x3FFF)
        | (((lbo >> 4) & 0x3FFF) << 16)
        | (((sbo >> 4) & 0x3FFF) << 32)
        | ((base & 7) << 49)
        | ((layout & 3) << 62)
    )


def canonical(rows, ebytes, mn_major, layout, k_bytes=32):
    """(lbo, sbo) of the canonical layout of a rows x (k_bytes) operand."""
    w = SWZ_BYTES[layout]
    if not mn_major:
        if layout == 0:
            return 128, 256  # core matrices: k-neighbours 128 B apart, 8-row groups 256 B
        return 16, 8 * w  # lbo unused; 8-row groups one atom (8 rows x w) apart
    per_row = w // ebytes  # MN elements in one swizzle row
    if layout == 0:
        # 8-element MN chunks 128 B apart (sbo), 8-row K groups after all of them (lbo)
        return (rows // 8) * 128, 128
    atoms_mn = max(1, rows // per_row)
    return 8 * w, atoms_mn * 8 * w  # lbo: next MN atom; sbo: next 8-row K group


def fits(rows, ebytes, mn_major, layout):
    return not mn_major or SWZ_BYTES[layout] <= rows * ebytes


EBYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "s8": 1}


def inputs():
    rnd = random.Random(23)
    out = HERE / "inputs"
    out.mkdir(exist_ok=True)
    n = G.SMEM_BYTES + 4 * 128 * 4
    vals = [rnd.randint(-3, 3) for _ in range(n)]
    f16 = b"".join(struct.pack("<e", float(v)) for v in vals[: n // 2])
    bf16 = b"".join(struct.pack("<f", float(v))[2:] for v in vals[: n // 2])
    tf32 = b"".join(struct.pack("<f", float(v)) for v in vals[: n // 4])
    e4m3 = {-3: 0xC4, -2: 0xC0, -1: 0xB8, 0: 0x00, 1: 0x38, 2: 0x40, 3: 0x44}
    e5m2 = {-3: 0xC2, -2: 0xC0, -1: 0xBC, 0: 0x00, 1: 0x3C, 2: 0x40, 3: 0x42}
    files = {
        "f16": f16,
        "bf16": bf16,
        "tf32": tf32,
        "e4m3": bytes(e4m3[v] for v in vals),
        "e5m2": bytes(e5m2[v] for v in vals),
        "s8": bytes(v & 0xFF for v in vals),
    }
    for k, v in files.items():
        (out / f"wg_{k}.bin").write_bytes(v)


def wgmma_launches():
    out = []
    for dt, n, src, ta, tb in G.kernels():
        e = EBYTES[dt]
        kname = G.name(dt, n, src, ta, tb)
        variants = []
        for layout in (0, 3, 2, 1):
            if dt not in ("f16",) and n not in (64, 256) and layout in (3, 2):
                continue
            if not (fits(64, e, ta, layout) and fits(n, e, tb, layout)):
                continue
            la, sa = canonical(64, e, ta, layout)
            lb, sb = canonical(n, e, tb, layout)
            variants.append((f"swz{SWZ_BYTES[layout]}", A_AT, la, sa, layout, B_AT, lb, sb, 0))
        if (
            dt == "f16"
            and n in (64, 256)
            and (ta, tb) in ((0, 0), (1, 1))
            or (dt == "f16" and n in (64, 256) and src == "rs")
        ):
            mn = bool(tb)
            for layout in (0, 1):
                la, sa = canonical(64, e, ta, layout)
                lb, sb = canonical(n, e, tb, layout)
                w = SWZ_BYTES[layout]
                variants.append((f"swz{w}_plus16", A_AT + 16, la, sa, layout, B_AT + 16, lb, sb, 0))
                variants.append(
                    (f"swz{w}_plus128", A_AT + 128, la, sa, layout, B_AT + 128, lb, sb, 0)
                )
                variants.append((f"swz{w}_lbo0", A_AT, 0, sa, layout, B_AT, 0, sb, 0))
                variants.append((f"swz{w}_sbo0", A_AT, la, 0, layout, B_AT, lb, 0, 0))
            if not mn:
                for k in (32, 64, 96):  # the k-block steps of a 128B-swizzled K-major tile
                    la, sa = canonical(64, e, ta, 1)
                    lb, sb = canonical(n, e, tb, 1)
                    variants.append((f"swz128_k{k}", A_AT + k, la, sa, 1, B_AT + k, lb, sb, 0))
                la, sa = canonical(64, e, ta, 1)
                lb, sb = canonical(n, e, tb, 1)
                variants.append(("swz128_base3", A_AT + 384, la, sa, 1, B_AT + 384, lb, sb, 3))
                variants.append(("swz128_sbo128", A_AT, la, 128, 1, B_AT, lb, 128, 0))
                variants.append(("none_odd", A_AT, 144, 272, 0, B_AT, 144, 272, 0))
                variants.append(("none_sbo16", A_AT, 128, 16, 0, B_AT, 128, 16, 0))
                variants.append(("none_lbo16", A_AT, 16, 256, 0, B_AT, 16, 256, 0))
        for tag, a0, la, sa, lay_a, b0, lb, sb, base in variants:
            regs = n // 2
            out.append(
                {
                    "id": f"{kname}_{tag}",
                    "cubin": "wgmma_probe.sm_90a.cubin",
                    "kernel": kname,
                    "block": [128, 1, 1],
                    "grid": [1, 1, 1],
                    "cluster": [1, 1, 1],
                    "dynamic_smem": G.SMEM_BYTES,
                    "args": [
                        {"file": f"inputs/wg_{dt}.bin"},
                        {"zeros": regs * 128 * 4},
                        {"u64": desc(a0, la, sa, lay_a, base)},
                        {"u64": desc(b0, lb, sb, lay_a, base)},
                    ],
                    "dumps": [1],
                }
            )
    return out


def tmap(buffer, dtype, dims, strides, box, swizzle=0, elem=None, dump=False, oob=0, l2=0):
    return {
        "tensormap": {
            "buffer": buffer,
            "dtype": dtype,
            "dims": dims,
            "strides": strides,
            "box": box,
            "elem_strides": elem or [1] * len(dims),
            "interleave": 0,
            "swizzle": swizzle,
            "l2": l2,
            "oob": oob,
            "dump": dump,
        }
    }


def u32_file(name, count, fn):
    path = HERE / "inputs" / name
    path.write_bytes(b"".join(struct.pack("<I", fn(i) & 0xFFFFFFFF) for i in range(count)))
    return {"file": f"inputs/{name}"}


def bf16_file(name, count, seed):
    rnd = random.Random(seed)
    vals = [rnd.randint(-2, 2) for _ in range(count)]
    path = HERE / "inputs" / name
    path.write_bytes(b"".join(struct.pack("<f", float(v))[2:] for v in vals))
    return {"file": f"inputs/{name}"}


def launch(lid, cubin, kernel, block, grid, args, smem=0, cluster=None, dumps=()):
    return {
        "id": lid,
        "cubin": cubin,
        "kernel": kernel,
        "block": list(block),
        "grid": list(grid),
        "cluster": list(cluster or (1, 1, 1)),
        "dynamic_smem": smem,
        "args": args,
        "dumps": list(dumps),
    }


def other_launches():
    out = []
    grid_in = u32_file("tma_in.bin", 128 * 64, lambda i: 0x10000 * (i // 64) + (i % 64))
    swz = {16: 0, 32: 1, 64: 2, 128: 3}  # CU_TENSOR_MAP_SWIZZLE_*
    for w in (16, 32, 64, 128):
        rowb = 128 if w == 16 else w
        spots = [(0, 0), (64 - rowb // 4, 64)] + ([(48, 96)] if w == 128 else [])
        for x0, y0 in spots:
            tag = f"tma_tile_{w}_x{x0}_y{y0}"
            out.append(
                launch(
                    tag,
                    "tma_probe.sm_90a.cubin",
                    f"tma_tile_{w}",
                    (128, 1, 1),
                    (1, 1, 1),
                    [
                        tmap(grid_in, "UINT32", [64, 128], [256], [rowb // 4, 64], swz[w]),
                        tmap(
                            {"zeros": 128 * 256},
                            "UINT32",
                            [64, 128],
                            [256],
                            [rowb // 4, 64],
                            swz[w],
                            dump=True,
                        ),
                        {"zeros": 64 * rowb},
                        {"zeros": 128 * 4},
                        {"int": x0},
                        {"int": y0},
                    ],
                    dumps=(1, 2, 3),
                )
            )
    lin = u32_file("tma_lin.bin", 4096, lambda i: i * 7 + 1)
    out.append(
        launch(
            "tma_ranks",
            "tma_probe.sm_90a.cubin",
            "tma_ranks",
            (128, 1, 1),
            (1, 1, 1),
            [
                tmap(lin, "UINT32", [1024], [], [256]),
                tmap(lin, "UINT32", [64, 64], [256], [32, 8]),
                tmap(lin, "UINT32", [32, 8, 4], [128, 1024], [32, 4, 4], l2=2),
                tmap(lin, "UINT32", [8, 4, 4, 4, 4], [32, 128, 512, 2048], [8, 2, 4, 2, 4]),
                {"zeros": (1280 + 512) * 4},
                {"zeros": 1024},
            ],
            dumps=(4, 5),
        )
    )
    smem_ws = 4 * 2 * 128 * 64 * 2 + 128 * 128 * 2 + 64 + 1024
    for kt in (4, 64):
        k = kt * 64
        a = bf16_file(f"ws_a_{k}.bin", 128 * k, 1 + k)
        b = bf16_file(f"ws_b_{k}.bin", 128 * k, 2 + k)
        out.append(
            launch(
                f"ws_gemm_k{k}",
                "ws_gemm.sm_90a.cubin",
                "ws_gemm",
                (384, 1, 1),
                (1, 1, 1),
                [
                    tmap(a, "BFLOAT16", [k, 128], [2 * k], [64, 128], 3),
                    tmap(b, "BFLOAT16", [k, 128], [2 * k], [64, 128], 3),
                    tmap(
                        {"zeros": 128 * 128 * 2},
                        "BFLOAT16",
                        [128, 128],
                        [256],
                        [128, 128],
                        0,
                        dump=True,
                    ),
                    {"int": kt},
                ],
                smem=smem_ws,
                dumps=(2,),
            )
        )
    out.append(
        launch(
            "cluster_dsmem",
            "cluster.sm_90a.cubin",
            "cluster_dsmem",
            (256, 1, 1),
            (4, 1, 1),
            [{"zeros": 4 * 512 * 4}],
            dumps=(0,),
        )
    )
    out.append(
        launch(
            "cluster_multicast",
            "cluster.sm_90a.cubin",
            "cluster_multicast",
            (128, 1, 1),
            (2, 1, 1),
            [tmap(grid_in, "UINT32", [64, 128], [256], [32, 64], 0), {"zeros": 2 * 2048 * 4}],
            cluster=(2, 1, 1),
            dumps=(1,),
        )
    )
    return out


def encodings():
    """Tensor maps encoded on the GPU and dumped (128 bytes each), one field varied at a time."""
    base = dict(
        dtype="UINT32",
        dims=[64, 128],
        strides=[256],
        box=[32, 64],
        elem=[1, 1],
        interleave=0,
        swizzle=0,
        l2=0,
        oob=0,
    )
    out = [dict(base, id="base")]
    for sw in (1, 2, 3):
        out.append(dict(base, id=f"swizzle{sw}", swizzle=sw, box=[8 << (sw - 1), 64]))
    for l2 in (1, 2, 3):
        out.append(dict(base, id=f"l2_{l2}", l2=l2))
    out.append(dict(base, id="oob_nan", dtype="FLOAT32", oob=1))
    for dt in (
        "UINT8",
        "UINT16",
        "INT32",
        "UINT64",
        "FLOAT16",
        "FLOAT32",
        "FLOAT64",
        "BFLOAT16",
        "FLOAT32_FTZ",
        "TFLOAT32",
        "TFLOAT32_FTZ",
        "INT64",
    ):
        out.append(dict(base, id=f"dtype_{dt}", dtype=dt))
    out.append(dict(base, id="dims_65x129", dims=[65, 129], strides=[272]))
    out.append(dict(base, id="dims_1000x7", dims=[1000, 7], strides=[4000], box=[16, 7]))
    out.append(dict(base, id="box_8x2", box=[8, 2]))
    out.append(dict(base, id="box_1x256", box=[4, 256], dims=[64, 256]))
    out.append(dict(base, id="elem_2x1", elem=[2, 1]))
    out.append(dict(base, id="elem_1x3", elem=[1, 3]))
    out.append(dict(base, id="stride_big", strides=[1 << 20], dims=[64, 128]))
    out.append(dict(base, id="rank1", dims=[1024], strides=[], box=[256], elem=[1]))
    out.append(
        dict(base, id="rank3", dims=[32, 8, 4], strides=[128, 1024], box=[32, 4, 4], elem=[1, 1, 1])
    )
    out.append(
        dict(
            base,
            id="rank5",
            dims=[8, 4, 4, 4, 4],
            strides=[32, 128, 512, 2048],
            box=[8, 2, 4, 2, 4],
            elem=[1] * 5,
        )
    )
    out.append(
        dict(
            base,
            id="interleave16",
            interleave=1,
            dims=[8, 128],
            strides=[32],
            box=[8, 64],
            swizzle=0,
        )
    )
    out.append(
        dict(
            base,
            id="bf16_swz128",
            dtype="BFLOAT16",
            dims=[4096, 128],
            strides=[8192],
            box=[64, 128],
            swizzle=3,
        )
    )
    return out


def main():
    inputs()
    wg = wgmma_launches()
    canon = [
        x
        for x in wg
        if x["id"].rsplit("_", 1)[1].startswith("swz") and "_" not in x["id"].split("_swz")[1]
    ]
    launches = other_launches() + canon + [x for x in wg if x not in canon]
    (HERE / "launches.json").write_text(
        json.dumps({"launches": launches, "encodings": encodings()}, indent=1)
    )
    print(len(launches), "launches")


if __name__ == "__main__":
    main()
