"""Triton kernels of our own for the mma36 lab (issue 27): `tl.dot` variants that Triton 3.6
lowers to mma.sync (HMMA, operands through ldmatrix) on sm_90: fp16, bf16 and tf32 inputs,
either operand stored row- or column-major (strides given), masked M/N/K edges, the
accumulator passed to tl.dot or added after it, `allow_tf32`, operands changed in registers
before the dot, and an attention-like kernel with two dots."""

import triton
import triton.language as tl


@triton.jit
def mm_v(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    s_am,
    s_ak,
    s_bk,
    s_bn,
    s_cm,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    MODE: tl.constexpr,
    SCALE: tl.constexpr,
):
    # MODE 0: acc += tl.dot(a, b); 1: acc = tl.dot(a, b, acc); 2: the same with allow_tf32
    # SCALE: A doubled in registers before the dot (its tile goes through registers)
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * s_am + rk[None, :] * s_ak
    b_ptrs = b_ptr + rk[:, None] * s_bk + rn[None, :] * s_bn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if SCALE:
            a = (a * 2).to(a_ptr.dtype.element_ty)
        if MODE == 0:
            acc += tl.dot(a, b)
        elif MODE == 1:
            acc = tl.dot(a, b, acc)
        else:
            acc = tl.dot(a, b, acc, allow_tf32=True)
        a_ptrs += BK * s_ak
        b_ptrs += BK * s_bk
    c = acc.to(c_ptr.dtype.element_ty)
    tl.store(
        c_ptr + rm[:, None] * s_cm + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N)
    )


@triton.jit
def attn2(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    n_ctx,
    BM: tl.constexpr,
    BN: tl.constexpr,
    D: tl.constexpr,
):
    # one head: S = Q K^T (K read transposed), online softmax, O = P V; rows past n_ctx masked
    pid = tl.program_id(0)
    rm = pid * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :], mask=rm[:, None] < n_ctx, other=0.0)
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    for start in range(0, n_ctx, BN):
        rn = start + tl.arange(0, BN)
        kt = tl.load(k_ptr + rn[None, :] * D + rd[:, None], mask=rn[None, :] < n_ctx, other=0.0)
        s = tl.dot(q, kt) * 0.125
        s = tl.where(rn[None, :] < n_ctx, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = tl.load(v_ptr + rn[:, None] * D + rd[None, :], mask=rn[:, None] < n_ctx, other=0.0)
        acc = tl.dot(p.to(v_ptr.dtype.element_ty), v, acc)
        m_i = m_new
    o = acc / l_i[:, None]
    tl.store(
        o_ptr + rm[:, None] * D + rd[None, :],
        o.to(o_ptr.dtype.element_ty),
        mask=rm[:, None] < n_ctx,
    )
