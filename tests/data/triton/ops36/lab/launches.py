"""id: (kernel, constexprs, opts, grid, scalars,
tensors{name: dtype | ("desc", dtype, shape, block)})."""

L = {}
F32, F16, BF, F64, I32, I64, I8, U8 = (
    "float32",
    "float16",
    "bfloat16",
    "float64",
    "int32",
    "int64",
    "int8",
    "uint8",
)
E4, E5 = "float8_e4m3fn", "float8_e5m2"


def add(i, k, c, o, g, s, t):
    L[i] = (k, c, o, g, s, t)


W = lambda w, s=3: {"num_warps": w, "num_stages": s}  # noqa: E731
# pointwise
add(
    "pw_add_w4",
    "pw_add",
    {"XBLOCK": 1024},
    W(4),
    (2,),
    {"xnumel": 2000},
    {"x_ptr": F32, "y_ptr": F32, "o_ptr": F32},
)
add(
    "pw_add_f16_w1",
    "pw_add",
    {"XBLOCK": 256},
    W(1),
    (2,),
    {"xnumel": 500},
    {"x_ptr": F16, "y_ptr": F16, "o_ptr": F16},
)
add(
    "pw_add_w16_8192",
    "pw_add",
    {"XBLOCK": 8192},
    W(16),
    (1,),
    {"xnumel": 8000},
    {"x_ptr": F32, "y_ptr": F32, "o_ptr": F32},
)
add("pw_i64", "pw_i64", {"XBLOCK": 512}, W(4), (2,), {"xnumel": 1000}, {"x_ptr": F32, "o_ptr": F32})
# persistent reductions
for op, nm in enumerate(["sum", "max", "argmax", "min", "argmin"]):
    add(
        f"red_p_{nm}",
        "red_persist",
        {"XBLOCK": 8, "RBLOCK": 128, "OP": op},
        W(4),
        (2,),
        {"xnumel": 16, "rnumel": 100},
        {"in_ptr": F32, "o_ptr": F32},
    )
add(
    "red_p_sum_w1",
    "red_persist",
    {"XBLOCK": 1, "RBLOCK": 1024, "OP": 0},
    W(1),
    (2,),
    {"xnumel": 2, "rnumel": 1000},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "red_p_sum_w16",
    "red_persist",
    {"XBLOCK": 1, "RBLOCK": 8192, "OP": 0},
    W(16),
    (2,),
    {"xnumel": 2, "rnumel": 8000},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "red_p_argmax_w16_f16",
    "red_persist",
    {"XBLOCK": 2, "RBLOCK": 4096, "OP": 2},
    W(16),
    (2,),
    {"xnumel": 4, "rnumel": 4000},
    {"in_ptr": F16, "o_ptr": F32},
)
add(
    "red_p_max_bf16",
    "red_persist",
    {"XBLOCK": 4, "RBLOCK": 256, "OP": 1},
    W(8),
    (2,),
    {"xnumel": 8, "rnumel": 200},
    {"in_ptr": BF, "o_ptr": F32},
)
add(
    "red_p_sum_f64",
    "red_persist",
    {"XBLOCK": 4, "RBLOCK": 256, "OP": 0},
    W(8),
    (2,),
    {"xnumel": 8, "rnumel": 200},
    {"in_ptr": F64, "o_ptr": F64},
)
add(
    "red_p_sum_i64",
    "red_persist",
    {"XBLOCK": 4, "RBLOCK": 256, "OP": 0},
    W(4),
    (2,),
    {"xnumel": 8, "rnumel": 200},
    {"in_ptr": I64, "o_ptr": I64},
)
add(
    "red_axis0",
    "red_axis0",
    {"XBLOCK": 64, "RBLOCK": 64},
    W(4),
    (2,),
    {"n": 128},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "red_axis0_w8",
    "red_axis0",
    {"XBLOCK": 32, "RBLOCK": 256},
    W(8),
    (2,),
    {"n": 64},
    {"in_ptr": F16, "o_ptr": F32},
)
add(
    "red_loop",
    "red_loop",
    {"XBLOCK": 4, "RBLOCK": 256},
    W(4),
    (2,),
    {"xnumel": 8, "rnumel": 1000},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "red_loop_x1",
    "red_loop",
    {"XBLOCK": 1, "RBLOCK": 2048},
    W(8),
    (2,),
    {"xnumel": 2, "rnumel": 5000},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "red_loop_x64",
    "red_loop",
    {"XBLOCK": 64, "RBLOCK": 8},
    W(2),
    (2,),
    {"xnumel": 128, "rnumel": 40},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "welford_loop",
    "welford_loop",
    {"XBLOCK": 2, "RBLOCK": 512},
    W(4),
    (2,),
    {"xnumel": 4, "rnumel": 3000},
    {"in_ptr": F32, "mean_ptr": F32, "var_ptr": F32},
)
add(
    "welford_loop_x16",
    "welford_loop",
    {"XBLOCK": 16, "RBLOCK": 64},
    W(8),
    (2,),
    {"xnumel": 32, "rnumel": 300},
    {"in_ptr": F16, "mean_ptr": F32, "var_ptr": F32},
)
add(
    "welford_persist",
    "welford_persist",
    {"XBLOCK": 1, "RBLOCK": 1024},
    W(8),
    (2,),
    {"xnumel": 2, "rnumel": 768},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "sum_multi",
    "sum_multi",
    {"XB": 8, "YB": 16, "ZB": 32},
    W(4),
    (1,),
    {},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "bcast",
    "bcast_k",
    {"R": 64, "C": 64},
    W(4),
    (1,),
    {},
    {"a_ptr": F32, "b_ptr": F32, "o_ptr": F32},
)
add("where_softmax", "where_k", {"BLOCK": 64}, W(4), (1,), {"n": 60}, {"in_ptr": F32, "o_ptr": F32})
add(
    "softmax_8192_w16",
    "softmax_wide",
    {"BLOCK": 8192},
    W(16),
    (2,),
    {"n": 8000},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "softmax_16384_w32",
    "softmax_wide",
    {"BLOCK": 16384},
    W(32),
    (1,),
    {"n": 16000},
    {"in_ptr": F16, "o_ptr": F16},
)
# scans
add(
    "cumsum_1d_f32",
    "scan_cumsum",
    {"BLOCK": 1024, "AX": 0, "XB": 1},
    W(4),
    (1,),
    {"n": 1000},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "cumsum_1d_i64",
    "scan_cumsum",
    {"BLOCK": 512, "AX": 0, "XB": 1},
    W(4),
    (1,),
    {"n": 500},
    {"in_ptr": I64, "o_ptr": I64},
)
add(
    "cumsum_ax1",
    "scan_cumsum",
    {"BLOCK": 256, "AX": 1, "XB": 8},
    W(4),
    (1,),
    {"n": 256},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "cumsum_ax0_2d",
    "scan_cumsum",
    {"BLOCK": 32, "AX": 0, "XB": 64},
    W(4),
    (1,),
    {"n": 32},
    {"in_ptr": I32, "o_ptr": I32},
)
add(
    "cumsum_w1",
    "scan_cumsum",
    {"BLOCK": 128, "AX": 0, "XB": 1},
    W(1),
    (1,),
    {"n": 100},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "scan_custom",
    "scan_custom",
    {"BLOCK": 512, "TWO": False, "REV": False},
    W(4),
    (1,),
    {},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "scan_custom_rev",
    "scan_custom",
    {"BLOCK": 512, "TWO": False, "REV": True},
    W(4),
    (1,),
    {},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "scan_tuple",
    "scan_custom",
    {"BLOCK": 1024, "TWO": True, "REV": False},
    W(8),
    (1,),
    {},
    {"in_ptr": F32, "o_ptr": F32},
)
# sort / topk / histogram / gather
add(
    "sort_f32",
    "sort_k",
    {"BLOCK": 256, "ROWS": 4, "DESC": False},
    W(4),
    (1,),
    {},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "sort_i32_desc",
    "sort_k",
    {"BLOCK": 1024, "ROWS": 1, "DESC": True},
    W(4),
    (1,),
    {},
    {"in_ptr": I32, "o_ptr": I32},
)
add(
    "sort_f16_w8",
    "sort_k",
    {"BLOCK": 2048, "ROWS": 2, "DESC": False},
    W(8),
    (1,),
    {},
    {"in_ptr": F16, "o_ptr": F16},
)
add("topk", "topk_k", {"BLOCK": 1024, "K": 16}, W(4), (1,), {}, {"in_ptr": F32, "o_ptr": F32})
add(
    "hist_64",
    "hist_k",
    {"BLOCK": 1024, "BINS": 64},
    W(4),
    (1,),
    {"n": 1000},
    {"in_ptr": I32, "o_ptr": I32},
)
add(
    "hist_1024_w8",
    "hist_k",
    {"BLOCK": 4096, "BINS": 1024},
    W(8),
    (1,),
    {"n": 4000},
    {"in_ptr": I32, "o_ptr": I32},
)
add(
    "gather_ax1",
    "gather_k",
    {"R": 32, "C": 64, "AX": 1},
    W(4),
    (1,),
    {},
    {"in_ptr": F32, "idx_ptr": I32, "o_ptr": F32},
)
add(
    "gather_ax0",
    "gather_k",
    {"R": 64, "C": 32, "AX": 0},
    W(4),
    (1,),
    {},
    {"in_ptr": F32, "idx_ptr": I64, "o_ptr": F32},
)
add(
    "gather_small",
    "gather_k",
    {"R": 4, "C": 32, "AX": 1},
    W(1),
    (1,),
    {},
    {"in_ptr": F16, "idx_ptr": I32, "o_ptr": F16},
)
# shape ops
for op, nm in enumerate(
    ["trans", "trans_store", "join_split", "reshape_permute", "interleave", "reshape_reorder"]
):
    add(
        f"shape_{nm}",
        "shape_k",
        {"R": 64, "C": 32, "OP": op},
        W(4),
        (1,),
        {},
        {"in_ptr": F32, "o_ptr": F32},
    )
add(
    "shape_trans_f16",
    "shape_k",
    {"R": 128, "C": 64, "OP": 1},
    W(8),
    (1,),
    {},
    {"in_ptr": F16, "o_ptr": F16},
)
add(
    "shape_trans_i8",
    "shape_k",
    {"R": 64, "C": 64, "OP": 1},
    W(2),
    (1,),
    {},
    {"in_ptr": I8, "o_ptr": I8},
)
# atomics
for dt in (F32, F16, BF, F64, I64, I32):
    add(
        f"atom_add_{dt}",
        "atomic_k",
        {"BLOCK": 256, "OP": 0, "ONE": False},
        W(4),
        (1,),
        {},
        {"o_ptr": dt, "idx_ptr": I32, "val_ptr": dt},
    )
    add(
        f"atom_add_one_{dt}",
        "atomic_k",
        {"BLOCK": 256, "OP": 0, "ONE": True},
        W(4),
        (1,),
        {},
        {"o_ptr": dt, "idx_ptr": I32, "val_ptr": dt},
    )
for dt in (F32, I32, I64):
    add(
        f"atom_max_{dt}",
        "atomic_k",
        {"BLOCK": 128, "OP": 1, "ONE": False},
        W(4),
        (1,),
        {},
        {"o_ptr": dt, "idx_ptr": I32, "val_ptr": dt},
    )
add(
    "atom_min_f32_one",
    "atomic_k",
    {"BLOCK": 128, "OP": 2, "ONE": True},
    W(4),
    (1,),
    {},
    {"o_ptr": F32, "idx_ptr": I32, "val_ptr": F32},
)
for dt in (F32, I64):
    add(
        f"atom_xchg_{dt}",
        "atomic_k",
        {"BLOCK": 128, "OP": 3, "ONE": False},
        W(4),
        (1,),
        {},
        {"o_ptr": dt, "idx_ptr": I32, "val_ptr": dt},
    )
add(
    "atom_add_ret_f32",
    "atomic_k",
    {"BLOCK": 128, "OP": 4, "ONE": True},
    W(4),
    (1,),
    {},
    {"o_ptr": F32, "idx_ptr": I32, "val_ptr": F32},
)
for dt in (F32, I32, I64, F64):
    add(
        f"atom_scalar_add_{dt}",
        "atomic_scalar",
        {"OP": 0},
        W(1),
        (4,),
        {},
        {"o_ptr": dt, "val_ptr": dt},
    )
add(
    "atom_scalar_cas_i32",
    "atomic_scalar",
    {"OP": 1},
    W(4),
    (4,),
    {},
    {"o_ptr": I32, "val_ptr": I32},
)
add(
    "atom_scalar_cas_i64",
    "atomic_scalar",
    {"OP": 1},
    W(4),
    (4,),
    {},
    {"o_ptr": I64, "val_ptr": I64},
)
add(
    "atom_scalar_xchg_f32",
    "atomic_scalar",
    {"OP": 2},
    W(1),
    (4,),
    {},
    {"o_ptr": F32, "val_ptr": F32},
)
add("cas_vec", "cas_k", {"BLOCK": 128}, W(4), (1,), {}, {"o_ptr": I32})
# inline asm
add(
    "asm_pack1",
    "asm_k",
    {"BLOCK": 256, "PACK": 1},
    W(4),
    (1,),
    {},
    {"in_ptr": U8 if False else I32, "o_ptr": I32},
)
add("asm_pack4", "asm_k", {"BLOCK": 1024, "PACK": 4}, W(4), (1,), {}, {"in_ptr": U8, "o_ptr": U8})
# dots
add(
    "dot_f16_w4",
    "dot_k",
    {"M": 64, "N": 64, "K": 32, "PREC": "tf32", "ACC": 0},
    W(4),
    (1,),
    {},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F32},
)
add(
    "dot_bf16_w8",
    "dot_k",
    {"M": 128, "N": 64, "K": 64, "PREC": "tf32", "ACC": 0},
    W(8),
    (1,),
    {},
    {"a_ptr": BF, "b_ptr": BF, "c_ptr": BF},
)
add(
    "dot_tf32_w4",
    "dot_k",
    {"M": 64, "N": 64, "K": 32, "PREC": "tf32", "ACC": 0},
    W(4),
    (1,),
    {},
    {"a_ptr": F32, "b_ptr": F32, "c_ptr": F32},
)
add(
    "dot_ieee_w4",
    "dot_k",
    {"M": 32, "N": 32, "K": 32, "PREC": "ieee", "ACC": 0},
    W(4),
    (1,),
    {},
    {"a_ptr": F32, "b_ptr": F32, "c_ptr": F32},
)
add(
    "dot_tf32x3_w2",
    "dot_k",
    {"M": 32, "N": 32, "K": 32, "PREC": "tf32x3", "ACC": 0},
    W(2),
    (1,),
    {},
    {"a_ptr": F32, "b_ptr": F32, "c_ptr": F32},
)
add(
    "dot_i8_w4",
    "dot_k",
    {"M": 64, "N": 64, "K": 64, "PREC": "tf32", "ACC": 1},
    W(4),
    (1,),
    {},
    {"a_ptr": I8, "b_ptr": I8, "c_ptr": I32},
)
add(
    "dot_i8_w1",
    "dot_k",
    {"M": 16, "N": 16, "K": 32, "PREC": "tf32", "ACC": 1},
    W(1),
    (1,),
    {},
    {"a_ptr": I8, "b_ptr": I8, "c_ptr": I32},
)
add(
    "dot_e4m3_w4",
    "dot_k",
    {"M": 64, "N": 64, "K": 64, "PREC": "tf32", "ACC": 0},
    W(4),
    (1,),
    {},
    {"a_ptr": E4, "b_ptr": E4, "c_ptr": F32},
)
add(
    "dot_e5m2_w4",
    "dot_k",
    {"M": 64, "N": 64, "K": 64, "PREC": "tf32", "ACC": 0},
    W(4),
    (1,),
    {},
    {"a_ptr": E5, "b_ptr": E5, "c_ptr": F32},
)
add(
    "dot_e4m3_w8_128",
    "dot_k",
    {"M": 128, "N": 128, "K": 64, "PREC": "tf32", "ACC": 0},
    W(8),
    (1,),
    {},
    {"a_ptr": E4, "b_ptr": E4, "c_ptr": F16},
)
add(
    "dot_f16acc",
    "dot_k",
    {"M": 64, "N": 64, "K": 32, "PREC": "tf32", "ACC": 2},
    W(4),
    (1,),
    {},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F16},
)
add(
    "dot_f16_w1",
    "dot_k",
    {"M": 16, "N": 16, "K": 16, "PREC": "tf32", "ACC": 0},
    W(1),
    (1,),
    {},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F32},
)
add(
    "dot_f64",
    "dot_k",
    {"M": 16, "N": 16, "K": 16, "PREC": "ieee", "ACC": 0},
    W(4),
    (1,),
    {},
    {"a_ptr": F64, "b_ptr": F64, "c_ptr": F64},
)
add(
    "mm_loop_f16_s4_w4",
    "mm_loop",
    {"BM": 64, "BN": 128, "BK": 32, "PREC": "tf32"},
    W(4, 4),
    (2, 1),
    {"M": 128, "N": 128, "K": 256},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F16},
)
add(
    "mm_loop_f16_s2_w8",
    "mm_loop",
    {"BM": 128, "BN": 128, "BK": 64, "PREC": "tf32"},
    W(8, 2),
    (1, 1),
    {"M": 128, "N": 128, "K": 256},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F16},
)
add(
    "mm_loop_bf16_s5_w4",
    "mm_loop",
    {"BM": 64, "BN": 64, "BK": 64, "PREC": "tf32"},
    W(4, 5),
    (2, 2),
    {"M": 128, "N": 128, "K": 512},
    {"a_ptr": BF, "b_ptr": BF, "c_ptr": BF},
)
add(
    "mm_loop_tf32_s3_w4",
    "mm_loop",
    {"BM": 64, "BN": 64, "BK": 32, "PREC": "tf32"},
    W(4, 3),
    (2, 2),
    {"M": 128, "N": 128, "K": 128},
    {"a_ptr": F32, "b_ptr": F32, "c_ptr": F32},
)
add(
    "mm_loop_e4m3_s3_w4",
    "mm_loop",
    {"BM": 64, "BN": 64, "BK": 64, "PREC": "tf32"},
    W(4, 3),
    (2, 2),
    {"M": 128, "N": 128, "K": 256},
    {"a_ptr": E4, "b_ptr": E4, "c_ptr": F16},
)
add(
    "mm_loop_i8_s3_w8",
    "mm_loop",
    {"BM": 128, "BN": 64, "BK": 64, "PREC": "tf32"},
    W(8, 3),
    (1, 2),
    {"M": 128, "N": 128, "K": 256},
    {"a_ptr": I8, "b_ptr": I8, "c_ptr": I32},
)
add(
    "mm_loop_f16_s1_w16",
    "mm_loop",
    {"BM": 256, "BN": 128, "BK": 32, "PREC": "tf32"},
    W(16, 1),
    (1, 1),
    {"M": 256, "N": 128, "K": 96},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F32},
)
add(
    "mm_desc_dev",
    "mm_desc_dev",
    {"BM": 64, "BN": 64, "BK": 64},
    W(4, 3),
    (2, 2),
    {"M": 128, "N": 128, "K": 256},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F16},
)
add(
    "mm_desc_dev_w8",
    "mm_desc_dev",
    {"BM": 128, "BN": 128, "BK": 64},
    W(8, 4),
    (1, 1),
    {"M": 128, "N": 128, "K": 256},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F16},
)
add(
    "mm_desc_host_f16",
    "mm_desc_host",
    {"BM": 64, "BN": 64, "BK": 64},
    W(4, 3),
    (2, 2),
    {"K": 256},
    {
        "a_desc": ("desc", F16, (128, 256), (64, 64)),
        "b_desc": ("desc", F16, (256, 128), (64, 64)),
        "c_desc": ("desc", F16, (128, 128), (64, 64)),
    },
)
add(
    "mm_desc_host_e4m3",
    "mm_desc_host",
    {"BM": 64, "BN": 64, "BK": 128},
    W(4, 3),
    (2, 2),
    {"K": 256},
    {
        "a_desc": ("desc", E4, (128, 256), (64, 128)),
        "b_desc": ("desc", E4, (256, 128), (128, 64)),
        "c_desc": ("desc", F16, (128, 128), (64, 64)),
    },
)
add(
    "mm_desc_host_bf16_w8",
    "mm_desc_host",
    {"BM": 128, "BN": 128, "BK": 32},
    W(8, 4),
    (1, 1),
    {"K": 128},
    {
        "a_desc": ("desc", BF, (128, 128), (128, 32)),
        "b_desc": ("desc", BF, (128, 128), (32, 128)),
        "c_desc": ("desc", F32, (128, 128), (128, 128)),
    },
)
add(
    "desc_copy_f32",
    "desc_copy",
    {"BR": 32, "BC": 64},
    W(4),
    (2,),
    {},
    {"a_desc": ("desc", F32, (64, 64), (32, 64)), "o_ptr": F32},
)
add(
    "desc_copy_i8",
    "desc_copy",
    {"BR": 16, "BC": 128},
    W(2),
    (2,),
    {},
    {"a_desc": ("desc", I8, (32, 128), (16, 128)), "o_ptr": I8},
)
add(
    "desc_atomic_add",
    "desc_reduce_store",
    {"BR": 32, "BC": 64},
    W(4),
    (2,),
    {"M": 64, "N": 64},
    {"in_ptr": F32, "o_ptr": F32},
)
# math, assert, rand
for op, nm in enumerate(
    [
        "tanh_erf_exp2",
        "pow_log1p_sin",
        "rsqrt_atan2_fmod",
        "rn_exp_log_cos",
        "isnan_rint_lgamma",
        "f64",
    ]
):
    add(
        f"libm_{nm}",
        "libm_k",
        {"BLOCK": 256, "OP": op},
        W(4),
        (1,),
        {},
        {"in_ptr": F32, "o_ptr": F32},
    )
add("assert", "assert_k", {"BLOCK": 256}, W(4), (1,), {"n": 200}, {"in_ptr": I32, "o_ptr": I32})
for op, nm in enumerate(["rand", "randn", "randint"]):
    add(
        f"rand_{nm}",
        "rand_k",
        {"BLOCK": 512, "OP": op},
        W(4),
        (2,),
        {"seed": 1234, "n": 1000},
        {"o_ptr": F32},
    )
add(
    "dropout",
    "dropout_k",
    {"BLOCK": 1024},
    W(4),
    (2,),
    {"seed": 42, "n": 2000, "p": 0.25},
    {"x_ptr": F32, "o_ptr": F32},
)
add("cvt_e4m3", "cvt_k", {"BLOCK": 256, "OP": 0}, W(4), (1,), {}, {"in_ptr": F32, "o_ptr": F32})
add("cvt_e5m2", "cvt_k", {"BLOCK": 256, "OP": 1}, W(4), (1,), {}, {"in_ptr": F32, "o_ptr": F32})
add("cvt_bf16", "cvt_k", {"BLOCK": 256, "OP": 2}, W(4), (1,), {}, {"in_ptr": F32, "o_ptr": F32})
add("cvt_f16_rtz", "cvt_k", {"BLOCK": 256, "OP": 3}, W(4), (1,), {}, {"in_ptr": F32, "o_ptr": F32})
add("cvt_int", "cvt_k", {"BLOCK": 256, "OP": 4}, W(4), (1,), {}, {"in_ptr": F32, "o_ptr": F32})
# attention
add(
    "attn_f16_w4",
    "attn_k",
    {"BM": 64, "BN": 64, "D": 64, "CAUSAL": False},
    W(4, 2),
    (2,),
    {"n_ctx": 128},
    {p: F16 for p in ("q_ptr", "k_ptr", "v_ptr", "o_ptr")},
)
add(
    "attn_causal_bf16_w8",
    "attn_k",
    {"BM": 128, "BN": 64, "D": 64, "CAUSAL": True},
    W(8, 3),
    (2,),
    {"n_ctx": 256},
    {p: BF for p in ("q_ptr", "k_ptr", "v_ptr", "o_ptr")},
)
add(
    "attn_f16_d128_w4",
    "attn_k",
    {"BM": 64, "BN": 32, "D": 128, "CAUSAL": False},
    W(4, 2),
    (1,),
    {"n_ctx": 64},
    {p: F16 for p in ("q_ptr", "k_ptr", "v_ptr", "o_ptr")},
)
# clusters
add(
    "cluster2",
    "cluster_k",
    {"BLOCK": 256},
    {"num_warps": 4, "num_ctas": 2},
    (2,),
    {},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "cluster2_mm",
    "mm_loop",
    {"BM": 128, "BN": 128, "BK": 64, "PREC": "tf32"},
    {"num_warps": 4, "num_stages": 3, "num_ctas": 2},
    (1, 1),
    {"M": 128, "N": 128, "K": 256},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F16},
)
# narrowing the f16 sort
add(
    "sort_f16_64_w1",
    "sort_k",
    {"BLOCK": 64, "ROWS": 1, "DESC": False},
    W(1),
    (1,),
    {},
    {"in_ptr": F16, "o_ptr": F16},
)
add(
    "sort_f16_256_w2",
    "sort_k",
    {"BLOCK": 256, "ROWS": 1, "DESC": False},
    W(2),
    (1,),
    {},
    {"in_ptr": F16, "o_ptr": F16},
)
add(
    "sort_f16_2048_w4",
    "sort_k",
    {"BLOCK": 2048, "ROWS": 1, "DESC": False},
    W(4),
    (1,),
    {},
    {"in_ptr": F16, "o_ptr": F16},
)
add(
    "sort_f16_2x256_w8",
    "sort_k",
    {"BLOCK": 256, "ROWS": 2, "DESC": False},
    W(8),
    (1,),
    {},
    {"in_ptr": F16, "o_ptr": F16},
)
add(
    "sort_bf16_256_w2",
    "sort_k",
    {"BLOCK": 256, "ROWS": 1, "DESC": False},
    W(2),
    (1,),
    {},
    {"in_ptr": BF, "o_ptr": BF},
)
add(
    "sort_i16_256_w2",
    "sort_k",
    {"BLOCK": 256, "ROWS": 1, "DESC": False},
    W(2),
    (1,),
    {},
    {"in_ptr": "int16", "o_ptr": "int16"},
)
add(
    "sort_f32_2x2048_w8",
    "sort_k",
    {"BLOCK": 2048, "ROWS": 2, "DESC": False},
    W(8),
    (1,),
    {},
    {"in_ptr": F32, "o_ptr": F32},
)
# batch 2
for op, nm in enumerate(
    ["flip", "cat", "clamp_fma_sigmoid", "softmax", "umulhi", "xor_sum", "int_div"]
):
    add(
        f"misc_{nm}",
        "misc_k",
        {"BLOCK": 256, "OP": op},
        W(4),
        (1,),
        {},
        {"in_ptr": F32, "o_ptr": F32},
    )
for op, nm in enumerate(["cg_wt", "volatile_barrier", "ca_atomic_release"]):
    add(
        f"hints_{nm}",
        "ld_hints",
        {"BLOCK": 512, "OP": op},
        W(4),
        (2,),
        {"n": 1000},
        {"in_ptr": F32, "o_ptr": F32},
    )
for op, nm in enumerate(["and", "or", "xor"]):
    add(
        f"atom_{nm}_i32",
        "atomic_bits",
        {"BLOCK": 128, "OP": op},
        W(4),
        (1,),
        {},
        {"o_ptr": I32, "val_ptr": I32},
    )
add(
    "atom_or_i64",
    "atomic_bits",
    {"BLOCK": 128, "OP": 1},
    W(4),
    (1,),
    {},
    {"o_ptr": I64, "val_ptr": I64},
)
add(
    "mm_persist",
    "mm_persist",
    {"BM": 64, "BN": 64, "BK": 32, "NSM": 2},
    W(4, 3),
    (2,),
    {"M": 128, "N": 128, "K": 128},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F16},
)
add(
    "mm_bT_f16",
    "mm_bT",
    {"M": 64, "N": 64, "K": 64},
    W(4),
    (1,),
    {},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F32},
)
add(
    "mm_bT_tf32_w2",
    "mm_bT",
    {"M": 32, "N": 32, "K": 32},
    W(2),
    (1,),
    {},
    {"a_ptr": F32, "b_ptr": F32, "c_ptr": F32},
)
add(
    "dot_scaled_e4m3",
    "dot_scaled_k",
    {"M": 64, "N": 64, "K": 64},
    W(4),
    (1,),
    {},
    {"a_ptr": E4, "b_ptr": E4, "sa_ptr": U8, "sb_ptr": U8, "c_ptr": F32},
)
for op, nm in enumerate(["sum", "max", "argmin"]):
    add(
        f"red_i8_{nm}",
        "red_i8_u8",
        {"BLOCK": 1024, "OP": op},
        W(4),
        (1,),
        {},
        {"in_ptr": I8, "o_ptr": I32},
    )
add(
    "red_u8_max", "red_i8_u8", {"BLOCK": 512, "OP": 1}, W(2), (1,), {}, {"in_ptr": U8, "o_ptr": I32}
)
add("cumprod", "cumprod_k", {"BLOCK": 256}, W(4), (1,), {}, {"in_ptr": F32, "o_ptr": F32})
add("asm_multi", "asm_multi", {"BLOCK": 256}, W(4), (1,), {}, {"in_ptr": I32, "o_ptr": I32})
add("lock", "lock_k", {}, W(1), (4,), {}, {"lock_ptr": I32, "cnt_ptr": I32})
add("pw_3d_grid", "pw_3d", {"XB": 32, "YB": 32}, W(4), (2, 2, 3), {}, {"x_ptr": F32, "o_ptr": F32})
add(
    "mm_loop_f16_w2_s2",
    "mm_loop",
    {"BM": 32, "BN": 32, "BK": 32, "PREC": "tf32"},
    W(2, 2),
    (2, 2),
    {"M": 64, "N": 64, "K": 100},
    {"a_ptr": F16, "b_ptr": F16, "c_ptr": F16},
)
add(
    "mm_loop_f32_ieee",
    "mm_loop",
    {"BM": 32, "BN": 32, "BK": 16, "PREC": "ieee"},
    W(4, 2),
    (2, 2),
    {"M": 64, "N": 64, "K": 64},
    {"a_ptr": F32, "b_ptr": F32, "c_ptr": F32},
)
add(
    "clamp_f32_sym",
    "clamp_k",
    {"BLOCK": 256, "OP": 0},
    W(4),
    (1,),
    {"lo": -0.75, "hi": 0.5},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "clamp_f16_sym",
    "clamp_k",
    {"BLOCK": 256, "OP": 0},
    W(4),
    (1,),
    {"lo": -0.75, "hi": 0.5},
    {"in_ptr": F16, "o_ptr": F16},
)
add(
    "clamp_bf16_sym",
    "clamp_k",
    {"BLOCK": 256, "OP": 0},
    W(4),
    (1,),
    {"lo": -0.75, "hi": 0.5},
    {"in_ptr": BF, "o_ptr": BF},
)
add(
    "clamp_f32_args",
    "clamp_k",
    {"BLOCK": 256, "OP": 1},
    W(4),
    (1,),
    {"lo": -0.75, "hi": 0.5},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "clamp_f32_asym",
    "clamp_k",
    {"BLOCK": 256, "OP": 2},
    W(4),
    (1,),
    {"lo": -0.75, "hi": 0.5},
    {"in_ptr": F32, "o_ptr": F32},
)
add(
    "grid_barrier",
    "grid_barrier_k",
    {"BLOCK": 256},
    W(4),
    (4,),
    {},
    {"x_ptr": F32, "sem_ptr": I32, "o_ptr": F32},
)
add(
    "lookback_scan",
    "lookback_k",
    {"BLOCK": 512},
    W(4),
    (4,),
    {},
    {"x_ptr": F32, "flag_ptr": I32, "agg_ptr": F32, "o_ptr": F32},
)
add(
    "bool_store",
    "bool_k",
    {"BLOCK": 512},
    W(4),
    (2,),
    {"n": 1000},
    {"x_ptr": F32, "m_ptr": "bool", "o_ptr": F32},
)
add(
    "sparse_blocks",
    "sparse_k",
    {"BM": 64, "BN": 64, "D": 64},
    W(4, 2),
    (2,),
    {},
    {"q_ptr": F16, "k_ptr": F16, "cnt_ptr": I32, "idx_ptr": I32, "o_ptr": F32},
)
add(
    "dot_f64_w1_32",
    "dot_k",
    {"M": 32, "N": 32, "K": 32, "PREC": "ieee", "ACC": 0},
    W(1),
    (1,),
    {},
    {"a_ptr": F64, "b_ptr": F64, "c_ptr": F64},
)
