"""The project's own Triton kernels for `shmem trace` of a Triton cache entry.

Compiled ahead of time by build.py (no GPU: GPUTarget("cuda", 90, 32)) into cache/, measured
once on an H200 from those very cubins (lab/). Importing this module needs Triton; the tests
that read cache/ do not.
"""

import triton
import triton.language as tl


@triton.jit
def softmax_rows(out_ptr, in_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    """One program per row: out[row] = softmax(in[row, :n_cols])."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols
    x = tl.load(in_ptr + row * row_stride + cols, mask=inside, other=-float("inf"))
    shifted = x - tl.max(x, axis=0)
    num = tl.exp(shifted)
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * row_stride + cols, num / den, mask=inside)


@triton.jit
def layernorm_rows(out_ptr, in_ptr, w_ptr, b_ptr, n_cols, eps, BLOCK: tl.constexpr):
    """One program per row: (x - mean) / sqrt(var + eps) * w + b over n_cols columns."""
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    inside = cols < n_cols
    x = tl.load(in_ptr + row * n_cols + cols, mask=inside, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    centred = tl.where(inside, x - mean, 0.0)
    var = tl.sum(centred * centred, axis=0) / n_cols
    scale = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=inside, other=0.0)
    b = tl.load(b_ptr + cols, mask=inside, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, centred * scale * w + b, mask=inside)


@triton.jit
def transpose_tiles(out_ptr, in_ptr, n_rows, n_cols, TILE: tl.constexpr):
    """out[c, r] = in[r, c] for an n_rows x n_cols row-major matrix, one TILE x TILE tile each."""
    tile_r = tl.program_id(0) * TILE
    tile_c = tl.program_id(1) * TILE
    r = tile_r + tl.arange(0, TILE)
    c = tile_c + tl.arange(0, TILE)
    inside = (r[:, None] < n_rows) & (c[None, :] < n_cols)
    tile = tl.load(in_ptr + r[:, None] * n_cols + c[None, :], mask=inside, other=0.0)
    flipped = tl.trans(tile)
    back = (c[:, None] < n_cols) & (r[None, :] < n_rows)
    tl.store(out_ptr + c[:, None] * n_rows + r[None, :], flipped, mask=back)


@triton.jit
def matmul_tiles(
    c_ptr,
    a_ptr,
    b_ptr,
    m,
    n,
    k,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    """C[m, n] = A[m, k] @ B[k, n], all row-major; fp32 accumulation, C in A's dtype."""
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    steps = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k, BK):
        a_in = (rows[:, None] < m) & (k0 + steps[None, :] < k)
        b_in = (k0 + steps[:, None] < k) & (cols[None, :] < n)
        a = tl.load(a_ptr + rows[:, None] * k + (k0 + steps[None, :]), mask=a_in, other=0.0)
        b = tl.load(b_ptr + (k0 + steps[:, None]) * n + cols[None, :], mask=b_in, other=0.0)
        acc = tl.dot(a, b, acc)
    out = (rows[:, None] < m) & (cols[None, :] < n)
    tl.store(c_ptr + rows[:, None] * n + cols[None, :], acc.to(c_ptr.dtype.element_ty), mask=out)
