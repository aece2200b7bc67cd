"""A Triton kernel of ours that calls one @triton.jit helper twice (tests/data/triton/README.md,
`helper_calls/`): the helper's rows name the line of each call."""

import triton
import triton.language as tl


@triton.jit
def tile_mm(a_ptr, b_ptr, offs_m, offs_n, offs_k, acc):
    a = tl.load(a_ptr + offs_m[:, None] * 64 + offs_k[None, :])
    b = tl.load(b_ptr + offs_k[:, None] * 64 + offs_n[None, :])
    return tl.dot(a, b, acc)


@triton.jit
def two_stages(c_ptr, a_ptr, b_ptr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    acc = tile_mm(a_ptr, b_ptr, offs_m, offs_n, offs_k, acc)
    acc = tile_mm(a_ptr + BK, b_ptr + BK * 64, offs_m, offs_n, offs_k, acc)
    tl.store(c_ptr + offs_m[:, None] * 64 + offs_n[None, :], acc)


@triton.jit
def column_sums(ptr, rows, cols):
    tile = tl.load(ptr + rows[:, None] * 64 + cols[None, :])
    return tl.sum(tile, axis=0)


@triton.jit
def two_sums(out_ptr, x_ptr, y_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    sx = column_sums(x_ptr, rows, cols)
    sy = column_sums(y_ptr, rows, cols)
    tl.store(out_ptr + cols, sx + sy)
