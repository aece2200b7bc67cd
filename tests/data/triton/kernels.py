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


@triton.jit
def matmul_grouped(
    c_ptr,
    a_ptr,
    b_ptr,
    m,
    n,
    k,
    GROUP: tl.constexpr,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
):
    """C = A @ B (row-major), programs in groups of GROUP rows of tiles for L2 reuse, rows and
    columns wrapped modulo m and n, the K tail masked: the usual shape of a Triton matmul."""
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(m, BM)
    tiles_n = tl.cdiv(n, BN)
    in_group = GROUP * tiles_n
    first_m = (pid // in_group) * GROUP
    size_m = min(tiles_m - first_m, GROUP)
    pid_m = first_m + (pid % in_group) % size_m
    pid_n = (pid % in_group) // size_m
    rows = (pid_m * BM + tl.arange(0, BM)) % m
    cols = (pid_n * BN + tl.arange(0, BN)) % n
    steps = tl.arange(0, BK)
    a_ptrs = a_ptr + rows[:, None] * k + steps[None, :]
    b_ptrs = b_ptr + steps[:, None] * n + cols[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in range(0, tl.cdiv(k, BK)):
        left = k - kk * BK
        a = tl.load(a_ptrs, mask=steps[None, :] < left, other=0.0)
        b = tl.load(b_ptrs, mask=steps[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * n
    out_r = pid_m * BM + tl.arange(0, BM)
    out_c = pid_n * BN + tl.arange(0, BN)
    inside = (out_r[:, None] < m) & (out_c[None, :] < n)
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(c_ptr + out_r[:, None] * n + out_c[None, :], c, mask=inside)


@triton.jit
def matmul_host_desc(
    a_desc, b_desc, c_desc, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """C = A @ B through host-side tensor descriptors (TensorDescriptor: TMA on Hopper)."""
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k, BK):
        a = a_desc.load([off_m, k0])
        b = b_desc.load([k0, off_n])
        acc = tl.dot(a, b, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def matmul_device_desc(
    c_ptr, a_ptr, b_ptr, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """C = A @ B through tensor descriptors made in the kernel (tl.make_tensor_descriptor,
    written into the global scratch Triton asks the allocator for)."""
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[m, k], strides=[k, 1], block_shape=[BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[k, n], strides=[n, 1], block_shape=[BK, BN])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[m, n], strides=[n, 1], block_shape=[BM, BN])
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k, BK):
        a = a_desc.load([off_m, k0])
        b = b_desc.load([k0, off_n])
        acc = tl.dot(a, b, acc)
    c_desc.store([off_m, off_n], acc.to(tl.float16))


@triton.jit
def centred_rows(out_ptr, in_ptr, n_cols, row_stride, col_stride, scale, CENTRE):
    """One program per row of 1,024 columns: out = (x - mean(x) if CENTRE else x) * scale.
    CENTRE is a runtime bool (an i1 parameter); called with col_stride=1, which Triton
    compiles into the kernel."""
    row = tl.program_id(0)
    cols = tl.arange(0, 1024)
    inside = cols < n_cols
    x = tl.load(in_ptr + row * row_stride + cols * col_stride, mask=inside, other=0.0)
    if CENTRE:
        x = tl.where(inside, x - tl.sum(x, axis=0) / n_cols, 0.0)
    tl.store(out_ptr + row * row_stride + cols * col_stride, x * scale, mask=inside)


@triton.jit
def matmul_tma_desc(
    a_desc, b_desc, c_desc, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    """C = A @ B of float16 through Triton 3.2/3.3's experimental host-side TMA descriptors
    (create_2d_tma_descriptor: a CUtensorMap the host encodes, passed by value)."""
    off_m = tl.program_id(0) * BM
    off_n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, k, BK):
        a = tl._experimental_descriptor_load(a_desc, [off_m, k0], [BM, BK], tl.float16)
        b = tl._experimental_descriptor_load(b_desc, [k0, off_n], [BK, BN], tl.float16)
        acc = tl.dot(a, b, acc)
    tl._experimental_descriptor_store(c_desc, acc.to(tl.float16), [off_m, off_n])
