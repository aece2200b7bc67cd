"""Tutorial-shaped Triton matmuls (our own code): grouped program order, pointer hints, a K
tail mask, an optional leaky ReLU epilogue, fp16/tf32 dots with 2 or 4 warps (mma.sync)."""

import triton
import triton.language as tl


@triton.jit
def leaky(x):
    return tl.where(x >= 0, x, 0.01 * x)


@triton.jit
def mm_tut(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GM: tl.constexpr,
           ACT: tl.constexpr, PREC: tl.constexpr):
    pid = tl.program_id(axis=0)
    npm = tl.cdiv(M, BM)
    npn = tl.cdiv(N, BN)
    per_group = GM * npn
    gid = pid // per_group
    fm = gid * GM
    gsz = min(npm - fm, GM)
    pm = fm + ((pid % per_group) % gsz)
    pn = (pid % per_group) // gsz
    ram = (pm * BM + tl.arange(0, BM)) % M
    rbn = (pn * BN + tl.arange(0, BN)) % N
    ram = tl.max_contiguous(tl.multiple_of(ram, BM), BM)
    rbn = tl.max_contiguous(tl.multiple_of(rbn, BN), BN)
    rk = tl.arange(0, BK)
    ap = a_ptr + (ram[:, None] * sam + rk[None, :] * sak)
    bp = b_ptr + (rk[:, None] * sbk + rbn[None, :] * sbn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BK)):
        a = tl.load(ap, mask=rk[None, :] < K - kk * BK, other=0)
        b = tl.load(bp, mask=rk[:, None] < K - kk * BK, other=0)
        if PREC == "tf32":
            acc = tl.dot(a, b, acc, input_precision="tf32")
        else:
            acc = tl.dot(a, b, acc)
        ap += BK * sak
        bp += BK * sbk
    if ACT == "leaky":
        acc = leaky(acc)
    c = acc.to(c_ptr.dtype.element_ty)
    rcm = pm * BM + tl.arange(0, BM)
    rcn = pn * BN + tl.arange(0, BN)
    cp = c_ptr + scm * rcm[:, None] + scn * rcn[None, :]
    tl.store(cp, c, mask=(rcm[:, None] < M) & (rcn[None, :] < N))
