"""Triton kernels of our own for the emptyreq lab: a dot whose row sums are reduced across
warps through shared memory (Triton 3.6 predicates those stores and loads: `@P0 STS`,
`@!P1 LDS`, whole warps with no lane on)."""

import triton
import triton.language as tl


@triton.jit
def dot_rowsum(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    SUM: tl.constexpr,
):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(
        a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0
    )
    b = tl.load(
        b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0
    )
    c = tl.dot(a, b)
    if SUM:
        s = tl.sum(c, axis=1)
        tl.store(c_ptr + rm, s, mask=rm < M)
    else:
        tl.store(
            c_ptr + rm[:, None] * N + rn[None, :], c, mask=(rm[:, None] < M) & (rn[None, :] < N)
        )
