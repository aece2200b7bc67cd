"""The Triton kernels of the Triton opcode lab (issue 27), written for this project.

Each makes Triton 3.6 (or 3.2) emit for sm_90 an instruction or modifier the emulator first
did not run; build.py compiles them, make_launches.py writes their inputs.
"""

import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice as LD
except ImportError:  # Triton 3.2
    from triton.language.extra.cuda import libdevice as LD


@triton.jit
def reduce_k(
    x_ptr,
    y_ptr,
    i_ptr,
    R,
    C,
    BR: tl.constexpr,
    BC: tl.constexpr,
    OP: tl.constexpr,
    AXIS: tl.constexpr,
    KEEP: tl.constexpr,
):
    r = tl.arange(0, BR)
    c = tl.arange(0, BC)
    m = (r[:, None] < R) & (c[None, :] < C)
    x = tl.load(x_ptr + r[:, None] * C + c[None, :], mask=m, other=0)
    if OP == "sum":
        y = tl.sum(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "max":
        y = tl.max(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "min":
        y = tl.min(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "argmax":
        y = tl.argmax(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "argmin":
        y = tl.argmin(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "maxidx":
        y, idx = tl.max(x, axis=AXIS, return_indices=True, keep_dims=KEEP)
        if AXIS == 0:
            tl.store(i_ptr + tl.arange(0, BC), tl.reshape(idx, (BC,)))
        else:
            tl.store(i_ptr + tl.arange(0, BR), tl.reshape(idx, (BR,)))
    elif OP == "xor":
        y = tl.xor_sum(x, axis=AXIS, keep_dims=KEEP)
    else:
        y = tl.reduce(x, AXIS, _mul_combine, keep_dims=KEEP)
    if AXIS == 0:
        tl.store(y_ptr + tl.arange(0, BC), tl.reshape(y, (BC,)).to(y_ptr.dtype.element_ty))
    else:
        tl.store(y_ptr + tl.arange(0, BR), tl.reshape(y, (BR,)).to(y_ptr.dtype.element_ty))


@triton.jit
def _mul_combine(a, b):
    return a * b


@triton.jit
def math_k(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr, OP: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m, other=1)
    z = tl.load(z_ptr + o, mask=m, other=1)
    if OP == "exp":
        y = tl.exp(x)
    elif OP == "exp2":
        y = tl.exp2(x)
    elif OP == "log":
        y = tl.log(x)
    elif OP == "log2":
        y = tl.log2(x)
    elif OP == "sqrt":
        y = tl.sqrt(x)
    elif OP == "sqrt_rn":
        y = tl.sqrt_rn(x)
    elif OP == "rsqrt":
        y = tl.rsqrt(x)
    elif OP == "sin":
        y = tl.sin(x)
    elif OP == "cos":
        y = tl.cos(x)
    elif OP == "erf":
        y = tl.erf(x)
    elif OP == "div_rn":
        y = tl.div_rn(x, z)
    elif OP == "fdiv":
        y = tl.fdiv(x, z)
    elif OP == "fdiv_ieee":
        y = tl.fdiv(x, z, ieee_rounding=True)
    elif OP == "truediv":
        y = x / z
    elif OP == "floordiv":
        y = x // z
    elif OP == "mod":
        y = x % z
    elif OP == "fma":
        y = tl.fma(x, z, x)
    elif OP == "umulhi":
        y = tl.umulhi(x, z)
    elif OP == "floor":
        y = tl.floor(x)
    elif OP == "ceil":
        y = tl.ceil(x)
    elif OP == "abs":
        y = tl.abs(x)
    elif OP == "neg":
        y = -x
    elif OP == "clamp":
        y = tl.clamp(x, z, z + 4)
    elif OP == "minimum":
        y = tl.minimum(x, z)
    elif OP == "maximum":
        y = tl.maximum(x, z)
    elif OP == "minimum_all":
        y = tl.minimum(x, z, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "maximum_all":
        y = tl.maximum(x, z, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "sigmoid":
        y = tl.sigmoid(x.to(tl.float32)).to(x.dtype)
    elif OP == "shl":
        y = x << (z & 7)
    elif OP == "shr":
        y = x >> (z & 7)
    elif OP == "bitops":
        y = (x & z) | (x ^ (~z))
    elif OP == "cmp":
        y = ((x < z) | (x == z) | (x != x)).to(x.dtype)
    else:
        y = x * z + x - z
    tl.store(y_ptr + o, y, mask=m)


@triton.jit
def cast_k(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ROUND: tl.constexpr, BITCAST: tl.constexpr):
    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = o < n
    x = tl.load(x_ptr + o, mask=m)
    if BITCAST:
        y = x.to(y_ptr.dtype.element_ty, bitcast=True)
    elif ROUND == "none":
        y = x.to(y_ptr.dtype.element_ty)
    else:
        y = x.to(y_ptr.dtype.element_ty, fp_downcast_rounding=ROUND)
    tl.store(y_ptr + o, y, mask=m)


@triton.jit
def ln_fwd_k(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    mean = 0
    _mean = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def ind_pointwise_k(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr, OP: tl.constexpr):
    xoffset = tl.program_id(0) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK)[:]
    xmask = xindex < xnumel
    x0 = xindex % 768
    x1 = xindex // 768
    tmp0 = tl.load(in_ptr0 + (xindex), xmask).to(tl.float32)
    tmp1 = tl.load(in_ptr1 + (x0), xmask, eviction_policy="evict_last").to(tl.float32)
    tmp2 = tmp0 + tmp1
    if OP == "gelu":
        tmp3 = 0.5 * tmp2 * (1 + LD.erf(tmp2 * 0.7071067811865476))
    elif OP == "tanh":
        tmp3 = LD.tanh(tmp2)
    elif OP == "relu":
        tmp3 = tl.maximum(tmp2, 0.0)
    elif OP == "silu":
        tmp3 = tmp2 * tl.sigmoid(tmp2)
    else:
        tmp3 = tmp2 * (x1 % 3).to(tl.float32)
    tl.store(out_ptr0 + (xindex), tmp3, xmask)


@triton.jit
def dotmask_k(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sbk,
    scm,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    TB: tl.constexpr,
):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rows = pm * BM + tl.arange(0, BM)
    cols = pn * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, tl.cdiv(K, BK)):
        kk = k0 * BK + ks
        a = tl.load(
            a_ptr + rows[:, None] * sam + kk[None, :],
            mask=(rows[:, None] < M) & (kk[None, :] < K),
            other=0.0,
        )
        if TB:
            b = tl.trans(
                tl.load(
                    b_ptr + cols[:, None] * sbk + kk[None, :],
                    mask=(cols[:, None] < N) & (kk[None, :] < K),
                    other=0.0,
                )
            )
        else:
            b = tl.load(
                b_ptr + kk[:, None] * sbk + cols[None, :],
                mask=(kk[:, None] < K) & (cols[None, :] < N),
                other=0.0,
            )
        acc += tl.dot(a, b)
    tl.store(
        c_ptr + rows[:, None] * scm + cols[None, :],
        acc.to(c_ptr.dtype.element_ty),
        mask=(rows[:, None] < M) & (cols[None, :] < N),
    )


@triton.jit
def dot_k(
    a_ptr,
    b_ptr,
    c_ptr,
    M,
    N,
    K,
    sam,
    sak,
    sbk,
    sbn,
    scm,
    scn,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    MASK: tl.constexpr,
    PREC: tl.constexpr,
    TRANS_B: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    if c_ptr.dtype.element_ty == tl.int32:
        acc = tl.zeros((BM, BN), dtype=tl.int32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        if MASK:
            a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k * BK), other=0.0)
            b = tl.load(b_ptrs, mask=(rk[:, None] < K - k * BK) & (rn[None, :] < N), other=0.0)
        else:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        if PREC == "none":
            acc += tl.dot(a, b)
        else:
            acc += tl.dot(a, b, input_precision=PREC)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    if MASK:
        tl.store(c_ptrs, c, mask=(rm[:, None] < M) & (rn[None, :] < N))
    else:
        tl.store(c_ptrs, c)
