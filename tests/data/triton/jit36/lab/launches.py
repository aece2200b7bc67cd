"""The launches the H200 measures with the PyTorch + Triton there (Triton JIT, its own cache)."""

# id: kernel, constexprs, options, grid, scalars, tensors (name: (dtype, shape)), descs
GROUPED = "matmul_grouped"
LAUNCHES = {
    "softmax_w4": (
        "softmax_rows",
        {"BLOCK": 1024},
        {"num_warps": 4},
        (2,),
        {"n_cols": 1000, "row_stride": 1024},
        {"out_ptr": ("float32", (2048,)), "in_ptr": ("float32", (2048,))},
    ),
    "layernorm": (
        "layernorm_rows",
        {"BLOCK": 1024},
        {"num_warps": 4},
        (2,),
        {"n_cols": 768, "eps": 1e-5},
        {
            "out_ptr": ("float32", (1536,)),
            "in_ptr": ("float32", (1536,)),
            "w_ptr": ("float32", (768,)),
            "b_ptr": ("float32", (768,)),
        },
    ),
    "transpose": (
        "transpose_tiles",
        {"TILE": 64},
        {"num_warps": 4},
        (2, 2),
        {"n_rows": 128, "n_cols": 128},
        {"out_ptr": ("float32", (128, 128)), "in_ptr": ("float32", (128, 128))},
    ),
    "matmul_f16": (
        "matmul_tiles",
        {"BM": 32, "BN": 32, "BK": 32},
        {"num_warps": 2, "num_stages": 2},
        (2, 2),
        {"m": 64, "n": 64, "k": 128},
        {
            "c_ptr": ("float16", (64, 64)),
            "a_ptr": ("float16", (64, 128)),
            "b_ptr": ("float16", (128, 64)),
        },
    ),
}


def _mm(dt, m, n, k, consts, opts):
    grid = ((-(-m // consts["BM"])) * (-(-n // consts["BN"])),)
    return (
        GROUPED,
        consts,
        opts,
        grid,
        {"m": m, "n": n, "k": k},
        {"c_ptr": (dt, (m, n)), "a_ptr": (dt, (m, k)), "b_ptr": (dt, (k, n))},
    )


LAUNCHES["grouped_a"] = _mm(
    "float16",
    128,
    128,
    128,
    {"GROUP": 4, "BM": 32, "BN": 32, "BK": 32},
    {"num_warps": 2, "num_stages": 3},
)
LAUNCHES["grouped_b"] = _mm(
    "float16",
    128,
    128,
    128,
    {"GROUP": 2, "BM": 64, "BN": 64, "BK": 32},
    {"num_warps": 2, "num_stages": 3},
)
LAUNCHES["grouped_c"] = _mm(
    "float16",
    128,
    128,
    128,
    {"GROUP": 4, "BM": 32, "BN": 64, "BK": 64},
    {"num_warps": 4, "num_stages": 3},
)
LAUNCHES["grouped_d"] = _mm(
    "float16",
    64,
    64,
    80,
    {"GROUP": 2, "BM": 32, "BN": 32, "BK": 32},
    {"num_warps": 2, "num_stages": 3},
)
LAUNCHES["grouped_tf32"] = _mm(
    "float32",
    96,
    96,
    96,
    {"GROUP": 2, "BM": 32, "BN": 32, "BK": 32},
    {"num_warps": 2, "num_stages": 2},
)
LAUNCHES["grouped_e"] = _mm(
    "float16",
    128,
    128,
    256,
    {"GROUP": 8, "BM": 16, "BN": 64, "BK": 64},
    {"num_warps": 4, "num_stages": 4},
)
LAUNCHES["host_desc"] = (
    "matmul_host_desc",
    {"BM": 64, "BN": 64, "BK": 32},
    {"num_warps": 4, "num_stages": 3},
    (2, 2),
    {"k": 128},
    {
        "a_desc": ("float16", (128, 128), (64, 32)),
        "b_desc": ("float16", (128, 128), (32, 64)),
        "c_desc": ("float16", (128, 128), (64, 64)),
    },
)
LAUNCHES["device_desc"] = (
    "matmul_device_desc",
    {"BM": 64, "BN": 64, "BK": 32},
    {"num_warps": 4, "num_stages": 3},
    (2, 2),
    {"m": 128, "n": 128, "k": 128},
    {
        "c_ptr": ("float16", (128, 128)),
        "a_ptr": ("float16", (128, 128)),
        "b_ptr": ("float16", (128, 128)),
    },
)
