"""Tutorial-style Triton kernels of our own (issue 27: a walk across Triton 3.0 to 3.6)."""

import triton
import triton.language as tl


@triton.jit
def sm_rows(dst, src, width, pitch, COLS: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, COLS)
    v = tl.load(src + r * pitch + c, mask=c < width, other=-float("inf"))
    v = v - tl.max(v, axis=0)
    e = tl.exp(v)
    tl.store(dst + r * pitch + c, e / tl.sum(e, axis=0), mask=c < width)


@triton.jit
def mm_f16(c_ptr, a_ptr, b_ptr, m, n, k, TM: tl.constexpr, TN: tl.constexpr, TK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * TM + tl.arange(0, TM)
    rn = pn * TN + tl.arange(0, TN)
    rk = tl.arange(0, TK)
    acc = tl.zeros((TM, TN), dtype=tl.float32)
    for k0 in range(0, k, TK):
        a = tl.load(a_ptr + rm[:, None] * k + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * n + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc.to(tl.float16))


@triton.jit
def ln_fwd(y_ptr, x_ptr, w_ptr, b_ptr, mu_ptr, rs_ptr, width, eps, COLS: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, COLS)
    keep = c < width
    x = tl.load(x_ptr + r * width + c, mask=keep, other=0.0)
    mu = tl.sum(x, axis=0) / width
    d = tl.where(keep, x - mu, 0.0)
    rs = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / width + eps)
    tl.store(mu_ptr + r, mu)
    tl.store(rs_ptr + r, rs)
    w = tl.load(w_ptr + c, mask=keep)
    b = tl.load(b_ptr + c, mask=keep)
    tl.store(y_ptr + r * width + c, d * rs * w + b, mask=keep)


@triton.jit
def ln_bwd(
    dx_ptr,
    dwp_ptr,
    dy_ptr,
    x_ptr,
    w_ptr,
    mu_ptr,
    rs_ptr,
    locks,
    width,
    GROUPS: tl.constexpr,
    COLS: tl.constexpr,
):
    r = tl.program_id(0)
    c = tl.arange(0, COLS)
    keep = c < width
    x = tl.load(x_ptr + r * width + c, mask=keep, other=0.0)
    dy = tl.load(dy_ptr + r * width + c, mask=keep, other=0.0)
    w = tl.load(w_ptr + c, mask=keep)
    xh = tl.where(keep, (x - tl.load(mu_ptr + r)) * tl.load(rs_ptr + r), 0.0)
    g = dy * w
    s1 = tl.sum(xh * g, axis=0) / width
    s2 = tl.sum(g, axis=0) / width
    tl.store(dx_ptr + r * width + c, (g - (xh * s1 + s2)) * tl.load(rs_ptr + r), mask=keep)
    slot = r % GROUPS
    lock = locks + slot
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    part = tl.load(dwp_ptr + slot * width + c, mask=keep, other=0.0)
    tl.store(dwp_ptr + slot * width + c, part + dy * xh, mask=keep)
    tl.atomic_xchg(lock, 0)


@triton.jit
def hist_bins(counts, vals, total, BINS: tl.constexpr, CHUNK: tl.constexpr):
    p = tl.program_id(0)
    i = p * CHUNK + tl.arange(0, CHUNK)
    v = tl.load(vals + i, mask=i < total, other=0)
    h = tl.histogram(v, BINS)
    tl.atomic_add(counts + tl.arange(0, BINS), h)


@triton.jit
def attn_fwd(
    o_ptr,
    q_ptr,
    k_ptr,
    v_ptr,
    seq,
    scale,
    QB: tl.constexpr,
    KB: tl.constexpr,
    HD: tl.constexpr,
):
    qb = tl.program_id(0)
    rq = qb * QB + tl.arange(0, QB)
    rd = tl.arange(0, HD)
    q = tl.load(q_ptr + rq[:, None] * HD + rd[None, :])
    best = tl.full((QB,), -float("inf"), tl.float32)
    norm = tl.zeros((QB,), tl.float32)
    acc = tl.zeros((QB, HD), tl.float32)
    for start in range(0, seq, KB):
        rk = start + tl.arange(0, KB)
        kt = tl.load(k_ptr + rk[None, :] * HD + rd[:, None])
        s = tl.dot(q, kt) * scale
        top = tl.maximum(best, tl.max(s, axis=1))
        p = tl.exp(s - top[:, None])
        fix = tl.exp(best - top)
        norm = norm * fix + tl.sum(p, axis=1)
        v = tl.load(v_ptr + rk[:, None] * HD + rd[None, :])
        acc = acc * fix[:, None] + tl.dot(p.to(tl.float16), v)
        best = top
    tl.store(o_ptr + rq[:, None] * HD + rd[None, :], (acc / norm[:, None]).to(tl.float16))


@triton.jit
def col_total(ptr, rows, cols, pitch):
    t = tl.load(ptr + rows[:, None] * pitch + cols[None, :])
    return tl.sum(t, axis=0)


@triton.jit
def two_totals(out, a, b, pitch, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    ta = col_total(a, rows, cols, pitch)
    tb = col_total(b, rows, cols, pitch)
    tl.store(out + cols, ta * tb)
