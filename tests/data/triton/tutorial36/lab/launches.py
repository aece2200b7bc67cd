"""id: kernel, constexprs, options, grid, scalars, tensors: the tutorial-shaped matmuls."""

LAUNCHES = {}
CONFIGS = [  # id, dtype, out dtype, M, N, K, BM, BN, BK, GM, warps, stages, act, prec
    ("t_32x64_s5_64", "float16", "float16", 64, 64, 64, 32, 64, 32, 8, 2, 5, "", ""),
    ("t_64x32_s5_64", "float16", "float16", 64, 64, 64, 64, 32, 32, 8, 2, 5, "", ""),
    ("t_32x64_s5_128", "float16", "float16", 128, 128, 128, 32, 64, 32, 8, 2, 5, "", ""),
    ("t_64x32_s5_256", "float16", "float16", 256, 256, 256, 64, 32, 32, 8, 2, 5, "", ""),
    ("t_32x32_s5_96", "float16", "float16", 96, 96, 80, 32, 32, 32, 8, 2, 5, "", ""),
    ("t_32x64_s4_leaky", "float16", "float16", 128, 128, 128, 32, 64, 32, 8, 2, 4, "leaky", ""),
    ("t_64x64_s4_w2", "float16", "float16", 128, 128, 96, 64, 64, 32, 4, 2, 4, "", ""),
    ("t_32x128_w4", "float16", "float16", 128, 256, 128, 32, 128, 64, 8, 4, 4, "", ""),
    ("t_16x64_w4", "float16", "float16", 64, 128, 128, 16, 64, 64, 8, 4, 3, "", ""),
    ("t_tf32_w2", "float32", "float32", 64, 64, 64, 32, 32, 32, 8, 2, 4, "", "tf32"),
    ("t_64x32_s3_k200", "float16", "float16", 128, 64, 200, 64, 32, 32, 8, 2, 3, "", ""),
    ("t_f16acc_w2", "float16", "float16", 100, 100, 100, 32, 64, 32, 8, 2, 5, "", ""),
]
for ident, dt, odt, m, n, k, bm, bn, bk, gm, w, s, act, prec in CONFIGS:
    grid = ((-(-m // bm)) * (-(-n // bn)),)
    LAUNCHES[ident] = (
        "mm_tut",
        {"BM": bm, "BN": bn, "BK": bk, "GM": gm, "ACT": act, "PREC": prec},
        {"num_warps": w, "num_stages": s},
        grid,
        {"M": m, "N": n, "K": k, "sam": k, "sak": 1, "sbk": n, "sbn": 1, "scm": n, "scn": 1},
        {"a_ptr": (dt, (m, k)), "b_ptr": (dt, (k, n)), "c_ptr": (odt, (m, n))},
    )
