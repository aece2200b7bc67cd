"""Two Triton kernels of the project's own (nothing here is upstream code), of kinds a Triton
user on Hopper writes that the other folders lack:

* ``ws_tile``: one program multiplies a 128 x K fp16 tile of A by a K x 64 tile of B through
  device-side descriptors, its K loop split into producer and consumer partitions by
  ``tl.range(warp_specialize=True)`` (the consumers release each stage with an mbarrier
  arrive of 128, ``SYNCS.ARRIVE.TRANS64.ART0``);
* ``row_sums_ptrs``: program g sums the row whose address is the g-th entry of a pointer
  array (as a grouped GEMM reads its operands), the sum crossing warps through shared memory.
"""

import triton
import triton.language as tl


@triton.jit
def ws_tile(a_ptr, b_ptr, c_ptr, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    a_desc = tl.make_tensor_descriptor(a_ptr, [BM, K], [K, 1], [BM, BK])
    b_desc = tl.make_tensor_descriptor(b_ptr, [K, BN], [BN, 1], [BK, BN])
    acc = tl.zeros([BM, BN], tl.float32)
    for k in tl.range(0, K, BK, warp_specialize=True):
        acc = tl.dot(a_desc.load([0, k]), b_desc.load([k, 0]), acc)
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    tl.store(c_ptr + rows[:, None] * BN + cols[None, :], acc.to(tl.float16))


@triton.jit
def row_sums_ptrs(rows_ptr, out_ptr, n, BLOCK: tl.constexpr):
    g = tl.program_id(0)
    row = tl.load(rows_ptr + g).to(tl.pointer_type(tl.float32))
    cols = tl.arange(0, BLOCK)
    x = tl.load(row + cols, mask=cols < n, other=0.0)
    tl.store(out_ptr + g, tl.sum(x, axis=0))


# a row's maximum under a programmatic dependent launch (launch_pdl=True), and the SM id
@triton.jit
def pdl_row_max(x_ptr, out_ptr, sm_ptr, n, BLOCK: tl.constexpr):
    tl.extra.cuda.gdc_wait()
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n, other=float("-inf"))
    m = tl.max(x, axis=0)
    tl.extra.cuda.gdc_launch_dependents()
    tl.store(out_ptr + row, m)
    tl.store(sm_ptr + row, tl.extra.cuda.smid())


# causal attention forward through block pointers (make_block_ptr, advance, boundary_check);
# ptxas keeps the rows' bounds check in a register across the loop (P2R) for the O store
@triton.jit
def attn_bp(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    scale,
    n_ctx,
    stride_row,
    BM: tl.constexpr,
    BN: tl.constexpr,
    D: tl.constexpr,
):
    pid = tl.program_id(0)
    base = tl.program_id(1) * n_ctx * stride_row
    qb = tl.make_block_ptr(
        q_ptr + base, (n_ctx, D), (stride_row, 1), (pid * BM, 0), (BM, D), (1, 0)
    )
    kb = tl.make_block_ptr(k_ptr + base, (D, n_ctx), (1, stride_row), (0, 0), (D, BN), (0, 1))
    vb = tl.make_block_ptr(v_ptr + base, (n_ctx, D), (stride_row, 1), (0, 0), (BN, D), (1, 0))
    q = tl.load(qb, boundary_check=(0,))
    m_i = tl.full([BM], float("-inf"), tl.float32)
    l_i = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    rows = pid * BM + tl.arange(0, BM)
    for start in range(0, (pid + 1) * BM, BN):
        s = tl.dot(q, tl.load(kb, boundary_check=(1,))) * scale
        s = tl.where(rows[:, None] >= (start + tl.arange(0, BN))[None, :], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(vb, boundary_check=(0,))
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new
        kb = tl.advance(kb, (0, BN))
        vb = tl.advance(vb, (BN, 0))
    ob = tl.make_block_ptr(
        o_ptr + base, (n_ctx, D), (stride_row, 1), (pid * BM, 0), (BM, D), (1, 0)
    )
    tl.store(ob, (acc / l_i[:, None]).to(o_ptr.dtype.element_ty), boundary_check=(0,))
