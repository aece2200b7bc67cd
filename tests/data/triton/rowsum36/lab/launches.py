"""id: kernel, constexprs, options, grid, scalars, tensors (dtype, shape): the launches."""

LAUNCHES = {}
for ident, (bm, bn, bk), w, (m, n, k), s in (
    ("rowsum_16x16x16_w4", (16, 16, 16), 4, (16, 16, 16), True),
    ("rowsum_16x16x16_w4_m10", (16, 16, 16), 4, (10, 16, 16), True),
    ("rowsum_16x16x16_w2", (16, 16, 16), 2, (16, 16, 16), True),
    ("rowsum_32x32x32_w4", (32, 32, 32), 4, (32, 32, 32), True),
    ("rowsum_32x32x32_w2", (32, 32, 32), 2, (32, 32, 32), True),
    ("rowsum_64x64x32_w2", (64, 64, 32), 2, (64, 64, 32), True),
    ("dot_32x32x32_w4", (32, 32, 32), 4, (32, 32, 32), False),
):
    LAUNCHES[ident] = (
        "dot_rowsum",
        {"BM": bm, "BN": bn, "BK": bk, "SUM": s},
        {"num_warps": w},
        (1,),
        {"M": m, "N": n, "K": k},
        {
            "a_ptr": ("float16", (64, 64)),
            "b_ptr": ("float16", (64, 64)),
            "c_ptr": ("float32", (64, 64)),
        },
    )
