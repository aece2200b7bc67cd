"""id: kernel, constexprs, options, grid, scalars, tensors (dtype, shape): the launches."""

LAUNCHES = {}

# attention forward: (heads, n_ctx, D) fp16 tensors, grid (n_ctx / BM, heads)
for ident, d, bm, bn, w, s, causal in (
    ("attn_d64_128x64_w8_s3", 64, 128, 64, 8, 3, False),
    ("attn_d64_128x64_w8_s3_causal", 64, 128, 64, 8, 3, True),
    ("attn_d64_64x32_w4_s2", 64, 64, 32, 4, 2, False),
    ("attn_d64_64x32_w4_s2_causal", 64, 64, 32, 4, 2, True),
    ("attn_d128_128x32_w8_s2_causal", 128, 128, 32, 8, 2, True),
    ("attn_d128_64x64_w4_s3", 128, 64, 64, 4, 3, False),
    ("attn_d64_32x32_w2_s2_causal", 64, 32, 32, 2, 2, True),
    ("attn_d64_64x32_w2_s2", 64, 64, 32, 2, 2, False),
):
    n_ctx, heads = 256, 2
    shape = (heads, n_ctx, d)
    LAUNCHES[ident] = (
        "attn_fwd",
        {"D": d, "BM": bm, "BN": bn, "CAUSAL": causal},
        {"num_warps": w, "num_stages": s},
        (n_ctx // bm, heads),
        {"scale": 0.125, "s_h": n_ctx * d, "s_m": d, "n_ctx": n_ctx},
        {p: ("float16", shape) for p in ("q_ptr", "k_ptr", "v_ptr", "o_ptr")},
    )

# layernorm backward: 64 rows of 200 (and 512) columns, 8 (and 4) lock groups; with one
# group per row (the second round) no program waits for a lock
for ident, rows, cols, bn, group, w in (
    ("lnb_200_g8_w4", 64, 200, 256, 8, 4),
    ("lnb_512_g4_w8", 32, 512, 512, 4, 8),
    ("lnb_200_g64_w4", 64, 200, 256, 64, 4),
    ("lnb_512_g32_w8", 32, 512, 512, 32, 8),
):
    LAUNCHES[ident] = (
        "ln_bwd_dx",
        {"GROUP": group, "BN": bn},
        {"num_warps": w},
        (rows,),
        {"n_cols": cols, "s_row": cols},
        {
            "x_ptr": ("float16", (rows, cols)),
            "dy_ptr": ("float16", (rows, cols)),
            "dx_ptr": ("float16", (rows, cols)),
            "w_ptr": ("float16", (cols,)),
            "mean_ptr": ("float32", (rows,)),
            "rstd_ptr": ("float32", (rows,)),
            "pdw_ptr": ("float16", (group, cols)),
            "pdb_ptr": ("float16", (group, cols)),
            "lock_ptr": ("int32", (2 * group,)),
        },
    )
for ident, rows, cols, bm, bn, w in (
    ("lnb_dwdb_8x200", 8, 200, 32, 128, 4),
    ("lnb_dwdb_4x512", 4, 512, 32, 128, 4),
):
    LAUNCHES[ident] = (
        "ln_bwd_dwdb",
        {"BM": bm, "BN": bn},
        {"num_warps": w},
        (-(-cols // bn),),
        {"n_rows": rows, "n_cols": cols},
        {
            "pdw_ptr": ("float16", (rows, cols)),
            "pdb_ptr": ("float16", (rows, cols)),
            "dw_ptr": ("float16", (cols,)),
            "db_ptr": ("float16", (cols,)),
        },
    )

# histograms: 4 programs of BLOCK values
for ident, kern, block, bins, src, w in (
    ("hist_load_1024_64_w4", "hist", 1024, 64, "load", 4),
    ("hist_spread_1024_64_w4", "hist", 1024, 64, "spread", 4),
    ("hist_spread_512_128_w8", "hist", 512, 128, "spread", 8),
    ("hist_spread_256_16_w2", "hist", 256, 16, "spread", 2),
    ("hist_atomic_1024_64_w4", "hist_atomic", 1024, 64, None, 4),
):
    consts = {"BLOCK": block, "BINS": bins}
    if src is not None:
        consts["SRC"] = src
    LAUNCHES[ident] = (
        kern,
        consts,
        {"num_warps": w},
        (4,),
        {"n": 4 * block - 3},
        {"x_ptr": ("int32", (4 * block,)), "out_ptr": ("int32", (bins,))},
    )

# persistent matmuls: 3 programs over a 256 x 256 (x 128) fp16 product's tiles
for ident, kern, bm, bn, bk, w, s in (
    ("pers_desc_128x128x64_w8_s3", "mm_persist_desc", 128, 128, 64, 8, 3),
    ("pers_desc_64x64x32_w4_s3", "mm_persist_desc", 64, 64, 32, 4, 3),
    ("pers_ptr_128x128x64_w8_s3", "mm_persist", 128, 128, 64, 8, 3),
    ("pers_ptr_64x64x32_w4_s4", "mm_persist", 64, 64, 32, 4, 4),
):
    m, n, k = 256, 256, 128
    scal = {"M": m, "N": n, "K": k}
    if kern == "mm_persist":
        scal.update({"sam": k, "sbk": n, "scm": n})
    LAUNCHES[ident] = (
        kern,
        {"NPROG": 3, "BM": bm, "BN": bn, "BK": bk},
        {"num_warps": w, "num_stages": s},
        (3,),
        scal,
        {"a_ptr": ("float16", (m, k)), "b_ptr": ("float16", (k, n)), "c_ptr": ("float16", (m, n))},
    )

# matmul variants: dtype, out dtype, accumulator, BM, BN, BK, precision, B transposed,
# batches, warps, stages
for ident, dt, odt, acc, bm, bn, bk, prec, bt, nb, w, s in (
    ("v_bf16_32x64_w2", "bfloat16", "bfloat16", "f32", 32, 64, 32, "", False, 1, 2, 3),
    ("v_bf16_64x64_w4", "bfloat16", "float32", "f32", 64, 64, 32, "", False, 1, 4, 3),
    ("v_i8_32x64_w2", "int8", "int32", "int32", 32, 64, 64, "", False, 1, 2, 3),
    ("v_i8_64x64_w4", "int8", "int32", "int32", 64, 64, 64, "", False, 1, 4, 3),
    ("v_e4m3_64x64_w4", "float8_e4m3fn", "float16", "f32", 64, 64, 64, "", False, 1, 4, 3),
    ("v_e5m2_32x64_w2", "float8_e5m2", "float16", "f32", 32, 64, 64, "", False, 1, 2, 3),
    ("v_e4m3_32x64_w2", "float8_e4m3fn", "float16", "f32", 32, 64, 64, "", False, 1, 2, 3),
    ("v_f16_bt_32x64_w2", "float16", "float16", "f32", 32, 64, 32, "", True, 1, 2, 3),
    ("v_f16_bt_64x64_w4", "float16", "float16", "f32", 64, 64, 32, "", True, 1, 4, 3),
    ("v_f32_ieee_32x32_w2", "float32", "float32", "f32", 32, 32, 16, "ieee", False, 1, 2, 2),
    ("v_f32_ieee_64x64_w4", "float32", "float32", "f32", 64, 64, 32, "ieee", False, 1, 4, 2),
    ("v_f32_tf32x3_32x32_w2", "float32", "float32", "f32", 32, 32, 32, "tf32x3", False, 1, 2, 3),
    ("v_f16_64x64_w8", "float16", "float16", "f32", 64, 64, 32, "", False, 1, 8, 3),
    ("v_f16_32x64_w2_s1", "float16", "float16", "f32", 32, 64, 32, "", False, 1, 2, 1),
    ("v_f16_16x16_w1", "float16", "float16", "f32", 16, 16, 16, "", False, 1, 1, 2),
    ("v_f16_16x16_w2", "float16", "float16", "f32", 16, 16, 32, "", False, 1, 2, 3),
    ("v_f16_batched_32x32_w2", "float16", "float16", "f32", 32, 32, 32, "", False, 3, 2, 3),
):
    m, n, k = 64, 128, 128
    grid = (m // bm, n // bn, nb)
    LAUNCHES[ident] = (
        "mm_var",
        {"BM": bm, "BN": bn, "BK": bk, "PREC": prec, "BT": bt, "ACC": acc},
        {"num_warps": w, "num_stages": s},
        grid,
        {
            "M": m,
            "N": n,
            "K": k,
            "s_ab": m * k,
            "s_bb": k * n,
            "s_cb": m * n,
            "sam": k,
            "sbk": n,
            "sbn": k,
            "scm": n,
        },
        {
            "a_ptr": (dt, (nb, m, k)),
            "b_ptr": (dt, (nb, n, k) if bt else (nb, k, n)),
            "c_ptr": (odt, (nb, m, n)),
        },
    )
