"""Sweep kernels of our own, written in the shape of what Inductor emits and Triton offers."""
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice


@triton.jit
def pw_add(x_ptr, y_ptr, o_ptr, xnumel, XBLOCK: tl.constexpr):
    xoff = tl.program_id(0) * XBLOCK
    xi = xoff + tl.arange(0, XBLOCK)
    m = xi < xnumel
    a = tl.load(x_ptr + xi, m, other=0.0)
    b = tl.load(y_ptr + xi, m, other=0.0)
    tl.store(o_ptr + xi, tl.where(a > b, a, b) + a * b, m)


@triton.jit
def pw_i64(x_ptr, o_ptr, xnumel, XBLOCK: tl.constexpr):
    xi = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK).to(tl.int64)
    m = xi < xnumel
    a = tl.load(x_ptr + xi * 3, m, other=0.0)
    tl.store(o_ptr + xi, a * 2.0, m)


@triton.jit
def red_persist(in_ptr, o_ptr, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr, OP: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    ri = tl.arange(0, RBLOCK)[None, :]
    m = (xi < xnumel) & (ri < rnumel)
    v = tl.load(in_ptr + xi * rnumel + ri, m, other=0.0)
    if OP == 0:
        r = tl.sum(v, 1)[:, None]
    elif OP == 1:
        r = tl.max(tl.where(m, v, float("-inf")), 1)[:, None]
    elif OP == 2:
        r = tl.argmax(tl.where(m, v, float("-inf")), 1)[:, None].to(tl.float32)
    elif OP == 3:
        r = tl.min(tl.where(m, v, float("inf")), 1)[:, None]
    else:
        r = tl.argmin(tl.where(m, v, float("inf")), 1)[:, None].to(tl.float32)
    tl.store(o_ptr + xi, r, xi < xnumel)


@triton.jit
def red_axis0(in_ptr, o_ptr, n, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    ri = tl.arange(0, RBLOCK)[:, None]
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[None, :]
    v = tl.load(in_ptr + ri * n + xi)
    tl.store(o_ptr + tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK), tl.sum(v, 0))


@triton.jit
def red_loop(in_ptr, o_ptr, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xm = xi < xnumel
    acc = tl.full([XBLOCK, RBLOCK], 0, tl.float32)
    mx = tl.full([XBLOCK, RBLOCK], float("-inf"), tl.float32)
    for roff in range(0, rnumel, RBLOCK):
        ri = roff + tl.arange(0, RBLOCK)[None, :]
        m = xm & (ri < rnumel)
        v = tl.load(in_ptr + xi * rnumel + ri, m, other=0.0)
        acc = tl.where(m, acc + v, acc)
        mx = tl.where(m, tl.maximum(mx, v), mx)
    s = tl.sum(acc, 1)[:, None]
    x = tl.max(mx, 1)[:, None]
    tl.store(o_ptr + 2 * xi, s, xm)
    tl.store(o_ptr + 2 * xi + 1, x, xm)


@triton.jit
def _wf_combine(m1, s1, w1, m2, s2, w2):
    w = w1 + w2
    d = m2 - m1
    f = tl.where(w == 0.0, 0.0, w2 / w)
    return m1 + d * f, s1 + s2 + d * d * w1 * f, w


@triton.jit
def welford_loop(in_ptr, mean_ptr, var_ptr, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    xm = xi < xnumel
    mean = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    m2 = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    wt = tl.zeros([XBLOCK, RBLOCK], tl.float32)
    for roff in range(0, rnumel, RBLOCK):
        ri = roff + tl.arange(0, RBLOCK)[None, :]
        m = xm & (ri < rnumel)
        v = tl.load(in_ptr + xi * rnumel + ri, m, other=0.0)
        nw = wt + 1.0
        d = v - mean
        nmean = mean + d / nw
        nm2 = m2 + d * (v - nmean)
        mean = tl.where(m, nmean, mean)
        m2 = tl.where(m, nm2, m2)
        wt = tl.where(m, nw, wt)
    rm, rs, rw = tl.reduce((mean, m2, wt), 1, _wf_combine)
    tl.store(mean_ptr + xi, rm[:, None], xm)
    tl.store(var_ptr + xi, (rs / rw)[:, None], xm)


@triton.jit
def welford_persist(in_ptr, o_ptr, xnumel, rnumel, XBLOCK: tl.constexpr, RBLOCK: tl.constexpr):
    xi = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    ri = tl.arange(0, RBLOCK)[None, :]
    m = (xi < xnumel) & (ri < rnumel)
    v = tl.load(in_ptr + xi * rnumel + ri, m, other=0.0)
    mean = tl.sum(v, 1)[:, None] / rnumel
    d = tl.where(m, v - mean, 0.0)
    var = tl.sum(d * d, 1)[:, None] / rnumel
    y = d * libdevice.rsqrt(var + 1e-5)
    tl.store(o_ptr + xi * rnumel + ri, y, m)


@triton.jit
def scan_cumsum(in_ptr, o_ptr, n, BLOCK: tl.constexpr, AX: tl.constexpr, XB: tl.constexpr):
    if AX == 0:
        i = tl.arange(0, BLOCK)
        v = tl.load(in_ptr + i, i < n, other=0)
        tl.store(o_ptr + i, tl.cumsum(v, 0), i < n)
    else:
        r = tl.arange(0, XB)[:, None]
        c = tl.arange(0, BLOCK)[None, :]
        v = tl.load(in_ptr + r * BLOCK + c)
        tl.store(o_ptr + r * BLOCK + c, tl.cumsum(v, AX))


@triton.jit
def _cmb(a, b):
    return tl.maximum(a, b) + 1


@triton.jit
def _cmb2(a0, a1, b0, b1):
    return a0 * b0, a1 * b0 + b1


@triton.jit
def scan_custom(in_ptr, o_ptr, BLOCK: tl.constexpr, TWO: tl.constexpr, REV: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    if TWO:
        a, b = tl.associative_scan((v, v * 2.0), 0, _cmb2, reverse=REV)
        tl.store(o_ptr + i, a + b)
    else:
        tl.store(o_ptr + i, tl.associative_scan(v, 0, _cmb, reverse=REV))


@triton.jit
def sort_k(in_ptr, o_ptr, BLOCK: tl.constexpr, ROWS: tl.constexpr, DESC: tl.constexpr):
    r = tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    v = tl.load(in_ptr + r * BLOCK + c)
    tl.store(o_ptr + r * BLOCK + c, tl.sort(v, 1, descending=DESC))


@triton.jit
def topk_k(in_ptr, o_ptr, BLOCK: tl.constexpr, K: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    t = tl.topk(v, K)
    tl.store(o_ptr + tl.arange(0, K), t)


@triton.jit
def hist_k(in_ptr, o_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i, i < n, other=0)
    h = tl.histogram(v, BINS)
    tl.store(o_ptr + tl.arange(0, BINS), h)


@triton.jit
def gather_k(in_ptr, idx_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr, AX: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    v = tl.load(in_ptr + r * C + c)
    ix = tl.load(idx_ptr + r * C + c)
    tl.store(o_ptr + r * C + c, tl.gather(v, ix, AX))


@triton.jit
def shape_k(in_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr, OP: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    v = tl.load(in_ptr + r * C + c)
    if OP == 0:  # trans
        tl.store(o_ptr + c * R + r, tl.trans(v).T)
    elif OP == 1:  # trans stored transposed
        t = tl.trans(v)
        r2 = tl.arange(0, C)[:, None]
        c2 = tl.arange(0, R)[None, :]
        tl.store(o_ptr + r2 * R + c2, t)
    elif OP == 2:  # join/split
        j = tl.join(v, v * 2.0)
        a, b = tl.split(j)
        tl.store(o_ptr + r * C + c, a + b)
    elif OP == 3:  # reshape + permute
        t = tl.reshape(v, (R, C // 2, 2))
        p = tl.permute(t, (1, 0, 2))
        q = tl.reshape(p, (C // 2, R * 2))
        r2 = tl.arange(0, C // 2)[:, None]
        c2 = tl.arange(0, R * 2)[None, :]
        tl.store(o_ptr + r2 * (R * 2) + c2, q)
    elif OP == 4:  # interleave
        j = tl.interleave(v, v + 1.0)
        c3 = tl.arange(0, 2 * C)[None, :]
        tl.store(o_ptr + r * (2 * C) + c3, j)
    else:  # reshape can_reorder
        q = tl.reshape(v, (R * C,), can_reorder=True)
        tl.store(o_ptr + tl.arange(0, R * C), q)


@triton.jit
def where_k(in_ptr, o_ptr, n, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)[:, None]
    c = tl.arange(0, BLOCK)[None, :]
    m = (r < n) & (c < n) & (c <= r)
    v = tl.load(in_ptr + r * n + c, m, other=float("-inf"))
    e = tl.exp(v - tl.max(v, 1)[:, None])
    tl.store(o_ptr + r * n + c, tl.where(m, e / tl.sum(e, 1)[:, None], 0.0), (r < n) & (c < n))


@triton.jit
def atomic_k(o_ptr, idx_ptr, val_ptr, BLOCK: tl.constexpr, OP: tl.constexpr, ONE: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(val_ptr + i)
    if ONE:
        p = o_ptr + i * 0
    else:
        p = o_ptr + tl.load(idx_ptr + i)
    if OP == 0:
        tl.atomic_add(p, v)
    elif OP == 1:
        tl.atomic_max(p, v)
    elif OP == 2:
        tl.atomic_min(p, v)
    elif OP == 3:
        r = tl.atomic_xchg(p, v)
        tl.store(val_ptr + i, r)
    else:
        r = tl.atomic_add(p, v, sem="relaxed")
        tl.store(val_ptr + i, r)


@triton.jit
def atomic_scalar(o_ptr, val_ptr, OP: tl.constexpr):
    v = tl.load(val_ptr)
    if OP == 0:
        tl.atomic_add(o_ptr, v)
    elif OP == 1:
        tl.atomic_cas(o_ptr, v, v + 1)
    else:
        r = tl.atomic_xchg(o_ptr, v)
        tl.store(val_ptr, r)


@triton.jit
def cas_k(o_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    old = tl.atomic_cas(o_ptr + i, tl.zeros([BLOCK], tl.int32), i)
    tl.store(o_ptr + BLOCK + i, old)


@triton.jit
def asm_k(in_ptr, o_ptr, BLOCK: tl.constexpr, PACK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    if PACK == 1:
        r = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $1, 3;", "=r,r", [v], dtype=tl.uint32, is_pure=True, pack=1)
    else:
        r = tl.inline_asm_elementwise(
            "prmt.b32 $0, $1, 0, 0x0123;",
            "=r,r", [v], dtype=tl.uint8, is_pure=True, pack=4)
    tl.store(o_ptr + i, r)


@triton.jit
def dot_k(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PREC: tl.constexpr, ACC: tl.constexpr):
    rm = tl.arange(0, M)[:, None]
    rn = tl.arange(0, N)[None, :]
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn)
    if ACC == 1:
        acc = tl.dot(a, b, out_dtype=tl.int32)
    elif ACC == 2:
        acc = tl.dot(a, b, out_dtype=tl.float16)
    else:
        acc = tl.dot(a, b, input_precision=PREC)
    tl.store(c_ptr + rm * N + rn, acc.to(c_ptr.dtype.element_ty))


@triton.jit
def mm_loop(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(a_ptr + rm[:, None] * K + kk[None, :], (rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * N + rn[None, :], (kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PREC)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty), (rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def mm_desc_dev(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    ad = tl.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK])
    bd = tl.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BK, BN])
    cd = tl.make_tensor_descriptor(c_ptr, [M, N], [N, 1], [BM, BN])
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros([BM, BN], tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = ad.load([pm * BM, k * BK])
        b = bd.load([k * BK, pn * BN])
        acc = tl.dot(a, b, acc)
    cd.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def mm_desc_host(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    acc = tl.zeros([BM, BN], tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pm * BM, k * BK])
        b = b_desc.load([k * BK, pn * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pm * BM, pn * BN], acc.to(c_desc.dtype))


@triton.jit
def desc_copy(a_desc, o_ptr, BR: tl.constexpr, BC: tl.constexpr):
    t = a_desc.load([tl.program_id(0) * BR, 0])
    r = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    c = tl.arange(0, BC)[None, :]
    tl.store(o_ptr + r * BC + c, t)


@triton.jit
def desc_reduce_store(in_ptr, o_ptr, M, N, BR: tl.constexpr, BC: tl.constexpr):
    d = tl.make_tensor_descriptor(o_ptr, [M, N], [N, 1], [BR, BC])
    r = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    c = tl.arange(0, BC)[None, :]
    v = tl.load(in_ptr + r * N + c)
    d.atomic_add([tl.program_id(0) * BR, 0], v)


@triton.jit
def libm_k(in_ptr, o_ptr, BLOCK: tl.constexpr, OP: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    if OP == 0:
        r = libdevice.tanh(v) + libdevice.erf(v) + libdevice.exp2(v)
    elif OP == 1:
        r = libdevice.pow(v, 2.5) + libdevice.log1p(v) + libdevice.sin(v)
    elif OP == 2:
        r = libdevice.rsqrt(v) + libdevice.atan2(v, v + 1.0) + libdevice.fmod(v, 3.0)
    elif OP == 3:
        r = tl.sqrt_rn(v) + tl.div_rn(v, v + 1.0) + tl.exp(v) + tl.log(v) + tl.cos(v)
    elif OP == 4:
        r = libdevice.isnan(v).to(tl.float32) + libdevice.nearbyint(v) + libdevice.lgamma(v)
    else:
        vd = v.to(tl.float64)
        r = (libdevice.exp(vd) + libdevice.log(vd + 1.0) + libdevice.sqrt(vd)).to(tl.float32)
    tl.store(o_ptr + i, r)


@triton.jit
def assert_k(in_ptr, o_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i, i < n, other=0)
    tl.device_assert(v >= 0, "negative")
    tl.store(o_ptr + i, v + 1, i < n)


@triton.jit
def rand_k(o_ptr, seed, n, BLOCK: tl.constexpr, OP: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if OP == 0:
        r = tl.rand(seed, i)
    elif OP == 1:
        r = tl.randn(seed, i)
    else:
        r = tl.randint(seed, i).to(tl.float32)
    tl.store(o_ptr + i, r, i < n)


@triton.jit
def dropout_k(x_ptr, o_ptr, seed, n, p, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i, m)
    keep = tl.rand(seed, i) > p
    tl.store(o_ptr + i, tl.where(keep, x / (1 - p), 0.0), m)


@triton.jit
def softmax_wide(in_ptr, o_ptr, n, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + tl.program_id(0) * n + i, i < n, other=float("-inf"))
    e = tl.exp(v - tl.max(v, 0))
    tl.store(o_ptr + tl.program_id(0) * n + i, e / tl.sum(e, 0), i < n)


@triton.jit
def attn_k(q_ptr, k_ptr, v_ptr, o_ptr, n_ctx, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr, CAUSAL: tl.constexpr):
    pm = tl.program_id(0)
    rm = pm * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    mi = tl.full([BM], float("-inf"), tl.float32)
    li = tl.zeros([BM], tl.float32)
    acc = tl.zeros([BM, D], tl.float32)
    hi = (pm + 1) * BM if CAUSAL else n_ctx
    for s in range(0, hi, BN):
        rn = s + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[None, :] * D + rd[:, None])
        qk = tl.dot(q, k)
        if CAUSAL:
            qk = tl.where(rm[:, None] >= rn[None, :], qk, float("-inf"))
        mn = tl.maximum(mi, tl.max(qk, 1))
        p = tl.exp2(qk - mn[:, None])
        al = tl.exp2(mi - mn)
        li = li * al + tl.sum(p, 1)
        v = tl.load(v_ptr + rn[:, None] * D + rd[None, :])
        acc = acc * al[:, None] + tl.dot(p.to(v.dtype), v)
        mi = mn
    tl.store(o_ptr + rm[:, None] * D + rd[None, :], (acc / li[:, None]).to(o_ptr.dtype.element_ty))


@triton.jit
def cluster_k(in_ptr, o_ptr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    tl.store(o_ptr + i, v + tl.sum(v, 0))


@triton.jit
def bcast_k(a_ptr, b_ptr, o_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    a = tl.load(a_ptr + r)
    b = tl.load(b_ptr + c)
    x = a + b
    s = tl.sum(x, 0)
    tl.store(o_ptr + r * C + c, x - s[None, :])


@triton.jit
def cvt_k(in_ptr, o_ptr, BLOCK: tl.constexpr, OP: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    if OP == 0:
        r = v.to(tl.float8e4nv).to(tl.float32)
    elif OP == 1:
        r = v.to(tl.float8e5).to(tl.float32)
    elif OP == 2:
        r = v.to(tl.bfloat16).to(tl.float32)
    elif OP == 3:
        r = v.to(tl.float16, fp_downcast_rounding="rtz").to(tl.float32)
    else:
        r = v.to(tl.int8).to(tl.float32) + v.to(tl.uint16, bitcast=False).to(tl.float32)
    tl.store(o_ptr + i, r)


@triton.jit
def sum_multi(in_ptr, o_ptr, XB: tl.constexpr, YB: tl.constexpr, ZB: tl.constexpr):
    x = tl.arange(0, XB)[:, None, None]
    y = tl.arange(0, YB)[None, :, None]
    z = tl.arange(0, ZB)[None, None, :]
    v = tl.load(in_ptr + x * YB * ZB + y * ZB + z)
    s = tl.sum(v, 1)
    xi = tl.arange(0, XB)[:, None]
    zi = tl.arange(0, ZB)[None, :]
    tl.store(o_ptr + xi * ZB + zi, s)


@triton.jit
def misc_k(in_ptr, o_ptr, BLOCK: tl.constexpr, OP: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    if OP == 0:
        r = tl.flip(v, 0)
    elif OP == 1:
        r = tl.cat(v, v + 1.0, can_reorder=True)
        r = tl.sum(tl.reshape(r, (BLOCK, 2)), 1)
    elif OP == 2:
        r = tl.clamp(v, -0.5, 0.5) + tl.fma(v, v, 1.0) + tl.sigmoid(v)
    elif OP == 3:
        r = tl.softmax(v)
    elif OP == 4:
        r = tl.umulhi(v.to(tl.uint32, bitcast=True), (v * 3.0).to(tl.uint32, bitcast=True)).to(tl.float32)
    elif OP == 5:
        r = tl.xor_sum(v.to(tl.int32, bitcast=True), 0).to(tl.float32) + v * 0
    else:
        r = tl.cdiv(v.to(tl.int32), 3).to(tl.float32) + (v.to(tl.int32) // 7).to(tl.float32) + (v.to(tl.int32) % 5).to(tl.float32)
    tl.store(o_ptr + i, r)


@triton.jit
def ld_hints(in_ptr, o_ptr, n, BLOCK: tl.constexpr, OP: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.max_contiguous(tl.multiple_of(i, BLOCK), BLOCK)
    m = i < n
    if OP == 0:
        v = tl.load(in_ptr + i, m, cache_modifier=".cg", eviction_policy="evict_first")
        tl.store(o_ptr + i, v, m, cache_modifier=".wt")
    elif OP == 1:
        v = tl.load(in_ptr + i, m, volatile=True)
        tl.debug_barrier()
        tl.store(o_ptr + i, v + 1.0, m, eviction_policy="evict_last")
    else:
        v = tl.load(in_ptr + i, m, cache_modifier=".ca")
        tl.atomic_add(o_ptr + i, v, m, sem="release", scope="gpu")


@triton.jit
def atomic_bits(o_ptr, val_ptr, BLOCK: tl.constexpr, OP: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(val_ptr + i)
    p = o_ptr + (i % 8)
    if OP == 0:
        tl.atomic_and(p, v)
    elif OP == 1:
        tl.atomic_or(p, v)
    else:
        tl.atomic_xor(p, v)


@triton.jit
def mm_persist(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, NSM: tl.constexpr):
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    for t in tl.range(tl.program_id(0), tiles, NSM, flatten=True):
        pm = t // tiles_n
        pn = t % tiles_n
        rm = pm * BM + tl.arange(0, BM)
        rn = pn * BN + tl.arange(0, BN)
        acc = tl.zeros([BM, BN], tl.float32)
        for k in tl.range(0, K, BK, num_stages=3):
            rk = k + tl.arange(0, BK)
            a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
            b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


@triton.jit
def mm_bT(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rn[:, None] * K + rk[None, :])
    c = tl.dot(a, tl.trans(b))
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@triton.jit
def dot_scaled_k(a_ptr, b_ptr, sa_ptr, sb_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    c = tl.dot_scaled(a, sa, "e4m3", b, sb, "e4m3")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@triton.jit
def red_i8_u8(in_ptr, o_ptr, BLOCK: tl.constexpr, OP: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    if OP == 0:
        r = tl.sum(v.to(tl.int32), 0)
    elif OP == 1:
        r = tl.max(v, 0).to(tl.int32)
    else:
        r = tl.argmin(v, 0).to(tl.int32)
    tl.store(o_ptr, r)


@triton.jit
def cumprod_k(in_ptr, o_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    tl.store(o_ptr + i, tl.cumprod(v, 0))


@triton.jit
def asm_multi(in_ptr, o_ptr, BLOCK: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    a, b = tl.inline_asm_elementwise("mov.b32 $0, $2; add.u32 $1, $2, 7;", "=r,=r,r", [v], dtype=(tl.int32, tl.int32), is_pure=True, pack=1)
    tl.store(o_ptr + i, a * b)


@triton.jit
def lock_k(lock_ptr, cnt_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    c = tl.load(cnt_ptr)
    tl.store(cnt_ptr, c + 1)
    tl.atomic_xchg(lock_ptr, 0)


@triton.jit
def pw_3d(x_ptr, o_ptr, XB: tl.constexpr, YB: tl.constexpr):
    x = tl.program_id(0) * XB + tl.arange(0, XB)[:, None]
    y = tl.program_id(1) * YB + tl.arange(0, YB)[None, :]
    z = tl.program_id(2)
    v = tl.load(x_ptr + z * 4096 + x * 64 + y)
    tl.store(o_ptr + z * 4096 + y * 64 + x, v)


@triton.jit
def clamp_k(in_ptr, o_ptr, lo, hi, BLOCK: tl.constexpr, OP: tl.constexpr):
    i = tl.arange(0, BLOCK)
    v = tl.load(in_ptr + i)
    if OP == 0:
        r = tl.clamp(v, -0.5, 0.5)
    elif OP == 1:
        r = tl.clamp(v, lo, hi)
    else:
        r = tl.clamp(v, -2.0, 0.25)
    tl.store(o_ptr + i, r)


@triton.jit
def grid_barrier_k(x_ptr, sem_ptr, o_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    n = tl.num_programs(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    part = tl.sum(tl.load(x_ptr + i), 0)
    tl.store(o_ptr + pid, part)
    tl.debug_barrier()
    tl.atomic_add(sem_ptr, 1, sem="release")
    while tl.atomic_add(sem_ptr, 0, sem="acquire") < n:
        pass
    tot = tl.sum(tl.load(o_ptr + tl.arange(0, 4)), 0)
    tl.store(o_ptr + 8 + i, tl.load(x_ptr + i) / tot)


@triton.jit
def lookback_k(x_ptr, flag_ptr, agg_ptr, o_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + i)
    local = tl.cumsum(v, 0)
    total = tl.sum(v, 0)
    prefix = 0.0
    if pid > 0:
        while tl.atomic_add(flag_ptr + pid - 1, 0, sem="acquire") == 0:
            pass
        prefix = tl.load(agg_ptr + pid - 1, volatile=True)
    tl.store(agg_ptr + pid, prefix + total)
    tl.atomic_xchg(flag_ptr + pid, 1, sem="release")
    tl.store(o_ptr + i, local + prefix)


@triton.jit
def bool_k(x_ptr, m_ptr, o_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + i, i < n, other=0.0)
    keep = tl.load(m_ptr + i, i < n, other=0) != 0
    tl.store(m_ptr + n + i, x > 0, i < n)
    tl.store(o_ptr + i, tl.where(keep, x, 0.0), i < n)


@triton.jit
def sparse_k(q_ptr, k_ptr, cnt_ptr, idx_ptr, o_ptr, BM: tl.constexpr, BN: tl.constexpr, D: tl.constexpr):
    pm = tl.program_id(0)
    rm = pm * BM + tl.arange(0, BM)
    rd = tl.arange(0, D)
    q = tl.load(q_ptr + rm[:, None] * D + rd[None, :])
    acc = tl.zeros([BM, BN], tl.float32)
    nblk = tl.load(cnt_ptr + pm)
    for j in range(0, nblk):
        blk = tl.load(idx_ptr + pm * 8 + j)
        rn = blk * BN + tl.arange(0, BN)
        k = tl.load(k_ptr + rn[None, :] * D + rd[:, None])
        acc += tl.dot(q, k)
    tl.store(o_ptr + rm[:, None] * BN + tl.arange(0, BN)[None, :], acc)
