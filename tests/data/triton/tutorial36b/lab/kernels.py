"""Tutorial-kind Triton kernels of our own that tutorial36 did not cover: attention forward
(plain and causal), layernorm backward with a global spin lock and its column sums, histograms
(tl.histogram, global atomic adds), persistent matmuls (device-side tensor descriptors and
plain pointers) and matmul variants (bf16, int8, fp8, B transposed, fp32 ieee/tf32x3,
batched)."""

import triton
import triton.language as tl


@triton.jit
def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, scale, s_h, s_m, n_ctx,
             D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr):
    # one program: BM query rows of one head; keys/values walked BN rows at a time with a
    # running maximum and sum (online softmax in base 2)
    sm = tl.program_id(0)
    hd = tl.program_id(1)
    rm = sm * BM + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, D)
    base = hd * s_h
    q = tl.load(q_ptr + base + rm[:, None] * s_m + rd[None, :])
    qk_scale = scale * 1.4426950408889634
    run_max = tl.full((BM,), float("-inf"), tl.float32)
    run_sum = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, D), tl.float32)
    if CAUSAL:
        stop = sm * BM
    else:
        stop = n_ctx
    # blocks wholly below the diagonal (all of them when not causal): no mask
    for start in tl.range(0, stop, BN):
        kt = tl.load(k_ptr + base + (start + rn)[None, :] * s_m + rd[:, None])
        s = tl.dot(q, kt) * qk_scale
        new_max = tl.maximum(run_max, tl.max(s, 1))
        p = tl.math.exp2(s - new_max[:, None])
        fix = tl.math.exp2(run_max - new_max)
        run_sum = run_sum * fix + tl.sum(p, 1)
        acc = acc * fix[:, None]
        v = tl.load(v_ptr + base + (start + rn)[:, None] * s_m + rd[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc)
        run_max = new_max
    if CAUSAL:
        # the diagonal: keys up to the last query row of this block, masked above it
        for start in tl.range(sm * BM, (sm + 1) * BM, BN):
            kt = tl.load(k_ptr + base + (start + rn)[None, :] * s_m + rd[:, None])
            s = tl.dot(q, kt) * qk_scale
            s = tl.where(rm[:, None] >= (start + rn)[None, :], s, -1.0e6)
            new_max = tl.maximum(run_max, tl.max(s, 1))
            p = tl.math.exp2(s - new_max[:, None])
            fix = tl.math.exp2(run_max - new_max)
            run_sum = run_sum * fix + tl.sum(p, 1)
            acc = acc * fix[:, None]
            v = tl.load(v_ptr + base + (start + rn)[:, None] * s_m + rd[None, :])
            acc = tl.dot(p.to(v.dtype), v, acc)
            run_max = new_max
    acc = acc / run_sum[:, None]
    tl.store(o_ptr + base + rm[:, None] * s_m + rd[None, :], acc.to(o_ptr.dtype.element_ty))


@triton.jit
def ln_bwd_dx(x_ptr, dy_ptr, dx_ptr, w_ptr, mean_ptr, rstd_ptr, pdw_ptr, pdb_ptr, lock_ptr,
              n_cols, s_row, GROUP: tl.constexpr, BN: tl.constexpr):
    # one row per program: its dx, and its dw/db terms added into row (row % GROUP) of the
    # partial sums under that row's spin lock (lock_ptr[g]; the first writer's flag at
    # lock_ptr[GROUP + g])
    row = tl.program_id(0)
    cols = tl.arange(0, BN)
    ok = cols < n_cols
    x = tl.load(x_ptr + row * s_row + cols, mask=ok, other=0).to(tl.float32)
    dy = tl.load(dy_ptr + row * s_row + cols, mask=ok, other=0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=ok).to(tl.float32)
    mu = tl.load(mean_ptr + row)
    rs = tl.load(rstd_ptr + row)
    xh = tl.where(ok, (x - mu) * rs, 0.0)
    wdy = tl.where(ok, w * dy, 0.0)
    c1 = tl.sum(xh * wdy, axis=0) / n_cols
    c2 = tl.sum(wdy, axis=0) / n_cols
    dx = (wdy - (xh * c1 + c2)) * rs
    tl.store(dx_ptr + row * s_row + cols, dx.to(dx_ptr.dtype.element_ty), mask=ok)
    g = row % GROUP
    lock = lock_ptr + g
    seen = lock_ptr + GROUP + g
    pdw = pdw_ptr + g * n_cols + cols
    pdb = pdb_ptr + g * n_cols + cols
    dw = (dy * xh).to(w.dtype)
    db = dy.to(w.dtype)
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    if tl.load(seen) == 0:
        tl.atomic_xchg(seen, 1)
    else:
        dw += tl.load(pdw, mask=ok)
        db += tl.load(pdb, mask=ok)
    tl.store(pdw, dw, mask=ok)
    tl.store(pdb, db, mask=ok)
    tl.debug_barrier()
    tl.atomic_xchg(lock, 0)


@triton.jit
def ln_bwd_dwdb(pdw_ptr, pdb_ptr, dw_ptr, db_ptr, n_rows, n_cols,
                BM: tl.constexpr, BN: tl.constexpr):
    # column sums of the partial dw/db rows: BN columns per program
    pid = tl.program_id(0)
    cols = pid * BN + tl.arange(0, BN)
    sw = tl.zeros((BM, BN), tl.float32)
    sb = tl.zeros((BM, BN), tl.float32)
    for r0 in range(0, n_rows, BM):
        rows = r0 + tl.arange(0, BM)
        m = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        at = rows[:, None] * n_cols + cols[None, :]
        sw += tl.load(pdw_ptr + at, mask=m, other=0.0).to(tl.float32)
        sb += tl.load(pdb_ptr + at, mask=m, other=0.0).to(tl.float32)
    tl.store(dw_ptr + cols, tl.sum(sw, axis=0).to(dw_ptr.dtype.element_ty), mask=cols < n_cols)
    tl.store(db_ptr + cols, tl.sum(sb, axis=0).to(db_ptr.dtype.element_ty), mask=cols < n_cols)


@triton.jit
def hist(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr, SRC: tl.constexpr):
    # BLOCK values per program into BINS bins: tl.histogram, then one global atomic add per
    # bin; SRC "load" reads the values, "spread" makes them from the index (i * 7 mod BINS)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if SRC == "load":
        x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    else:
        x = (offs * 7) % BINS
    h = tl.histogram(x, BINS)
    tl.atomic_add(out_ptr + tl.arange(0, BINS), h)


@triton.jit
def hist_atomic(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BINS: tl.constexpr):
    # one global atomic add per value, at its bin
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.atomic_add(out_ptr + (x % BINS), 1, mask=offs < n)


@triton.jit
def mm_persist_desc(a_ptr, b_ptr, c_ptr, M, N, K, NPROG: tl.constexpr,
                    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # NPROG programs walk the tiles in turn; operands through device-side tensor descriptors
    pid = tl.program_id(0)
    ad = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    bd = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    cd = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    for t in tl.range(pid, tiles, NPROG, flatten=True):
        om = (t // tiles_n) * BM
        on = (t % tiles_n) * BN
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            a = ad.load([om, k * BK])
            b = bd.load([k * BK, on])
            acc = tl.dot(a, b, acc)
        cd.store([om, on], acc.to(tl.float16))


@triton.jit
def mm_persist(a_ptr, b_ptr, c_ptr, M, N, K, sam, sbk, scm, NPROG: tl.constexpr,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # the same walk over tiles with plain pointers
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BN)
    tiles = tl.cdiv(M, BM) * tiles_n
    rk = tl.arange(0, BK)
    for t in tl.range(pid, tiles, NPROG):
        rm = (t // tiles_n) * BM + tl.arange(0, BM)
        rn = (t % tiles_n) * BN + tl.arange(0, BN)
        acc = tl.zeros((BM, BN), tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            a = tl.load(a_ptr + rm[:, None] * sam + (k * BK + rk)[None, :])
            b = tl.load(b_ptr + (k * BK + rk)[:, None] * sbk + rn[None, :])
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rm[:, None] * scm + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def mm_var(a_ptr, b_ptr, c_ptr, M, N, K, s_ab, s_bb, s_cb, sam, sbk, sbn, scm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr,
           BT: tl.constexpr, ACC: tl.constexpr):
    # one BM x BN tile of batch program_id(2); B read as (K, N) or, with BT, as (N, K) rows
    # transposed in registers; ACC the accumulator type ("int32" for int8 dots)
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    pb = tl.program_id(2)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    ap = a_ptr + pb * s_ab + rm[:, None] * sam + rk[None, :]
    if ACC == "int32":
        acc = tl.zeros((BM, BN), tl.int32)
    else:
        acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(ap + k * BK)
        if BT:
            bt = tl.load(b_ptr + pb * s_bb + rn[:, None] * sbn + (k * BK + rk)[None, :])
            b = tl.trans(bt)
        else:
            b = tl.load(b_ptr + pb * s_bb + (k * BK + rk)[:, None] * sbk + rn[None, :])
        if ACC == "int32":
            acc = tl.dot(a, b, acc, out_dtype=tl.int32)
        elif PREC == "":
            acc = tl.dot(a, b, acc)
        else:
            acc = tl.dot(a, b, acc, input_precision=PREC)
    tl.store(c_ptr + pb * s_cb + rm[:, None] * scm + rn[None, :], acc.to(c_ptr.dtype.element_ty))
