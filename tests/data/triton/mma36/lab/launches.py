"""id: kernel, constexprs, options, grid, scalars, tensors (dtype, shape): the launches."""

LAUNCHES = {}


def _mm(
    ident, dt, mnk, tile, warps, stages, out=None, a_col=False, b_col=False, mode=0, scale=False
):
    (m, n, k), (bm, bn, bk) = mnk, tile
    LAUNCHES[ident] = (
        "mm_v",
        {"BM": bm, "BN": bn, "BK": bk, "MODE": mode, "SCALE": scale},
        {"num_warps": warps, "num_stages": stages},
        (-(-m // bm), -(-n // bn)),
        {
            "M": m,
            "N": n,
            "K": k,
            "s_am": 1 if a_col else k,
            "s_ak": m if a_col else 1,
            "s_bk": 1 if b_col else n,
            "s_bn": k if b_col else 1,
            "s_cm": n,
        },
        {"a_ptr": (dt, (m * k,)), "b_ptr": (dt, (k * n,)), "c_ptr": (out or dt, (m * n,))},
    )


def _attn(ident, dt, n_ctx, bm, bn, d, warps, stages):
    LAUNCHES[ident] = (
        "attn2",
        {"BM": bm, "BN": bn, "D": d},
        {"num_warps": warps, "num_stages": stages},
        (-(-n_ctx // bm),),
        {"n_ctx": n_ctx},
        {p: (dt, (n_ctx * d,)) for p in ("q_ptr", "k_ptr", "v_ptr", "o_ptr")},
    )


F, B, T = "float16", "bfloat16", "float32"
# fp16: tile shapes, warps, stages, masked edges (M, N, K not multiples of the tile)
_mm("f16_32x32x32_w2_s2", F, (64, 64, 64), (32, 32, 32), 2, 2)
_mm("f16_16x32x16_w2_s1", F, (32, 64, 64), (16, 32, 16), 2, 1)
_mm("f16_32x32x64_w4_s1", F, (64, 64, 128), (32, 32, 64), 4, 1)
_mm("f16_32x64x32_w4_s3_edge", F, (100, 72, 88), (32, 64, 32), 4, 3)
_mm("f16_64x64x32_w2_s3", F, (128, 128, 128), (64, 64, 32), 2, 3)
_mm("f16_16x64x64_w4_s4", F, (64, 128, 256), (16, 64, 64), 4, 4)
_mm("f16_16x16x16_w4_s2", F, (32, 32, 48), (16, 16, 16), 4, 2)
_mm("f16_128x128x32_w2_s2", F, (128, 128, 64), (128, 128, 32), 2, 2)
_mm("f16_32x16x128_w2_s4_k384", F, (64, 32, 384), (32, 16, 128), 2, 4)
_mm("f16_32x128x64_w8_s3", F, (64, 256, 192), (32, 128, 64), 8, 3)
_mm("f16_16x32x32_w8_s2_edge", F, (40, 50, 70), (16, 32, 32), 8, 2)
_mm("f16_bcol_64x128x32_w2_s4", F, (128, 128, 128), (64, 128, 32), 2, 4, b_col=True)
# fp16: five stages with 2 warps (the Triton matmul tutorial's mma.sync configurations) on
# shapes tutorial36 did not run: masked M, N and K tails, three programs in N
_mm("f16_64x32x32_w2_s5_edge", F, (100, 100, 200), (64, 32, 32), 2, 5)
_mm("f16_32x64x32_w2_s5_n192", F, (32, 192, 96), (32, 64, 32), 2, 5)
# fp16: an operand stored column-major (ldmatrix.trans or not), the accumulator chain,
# A changed in registers, a float32 output
_mm("f16_bcol_32x32x32_w2_s2", F, (64, 64, 64), (32, 32, 32), 2, 2, b_col=True)
_mm("f16_bcol_32x64x64_w4_s3_edge", F, (90, 100, 130), (32, 64, 64), 4, 3, b_col=True)
_mm("f16_acol_32x64x32_w2_s3", F, (64, 64, 96), (32, 64, 32), 2, 3, a_col=True)
_mm("f16_abcol_16x32x32_w4_s2", F, (48, 64, 64), (16, 32, 32), 4, 2, a_col=True, b_col=True)
_mm("f16_chain_32x64x32_w4_s3_k200", F, (64, 128, 200), (32, 64, 32), 4, 3, mode=1)
_mm("f16_scale_32x32x32_w2_s2", F, (64, 64, 96), (32, 32, 32), 2, 2, scale=True)
_mm("f16_scale_bcol_16x64x32_w4_s3", F, (32, 128, 96), (16, 64, 32), 4, 3, b_col=True, scale=True)
_mm("f16_out32_64x32x32_w2_s2", F, (128, 64, 64), (64, 32, 32), 2, 2, out=T)
# bf16
_mm("bf16_32x32x32_w2_s3", B, (64, 64, 128), (32, 32, 32), 2, 3)
_mm("bf16_32x64x32_w4_s2_edge", B, (70, 90, 80), (32, 64, 32), 4, 2)
_mm("bf16_bcol_16x128x32_w8_s3", B, (32, 128, 96), (16, 128, 32), 8, 3, b_col=True)
# tf32 (fp32 inputs): tl.dot's default precision, allow_tf32, transposed operands
_mm("tf32_32x32x32_w2_s2", T, (64, 64, 64), (32, 32, 32), 2, 2)
_mm("tf32_allow_16x32x16_w4_s3_edge", T, (40, 48, 56), (16, 32, 16), 4, 3, mode=2)
_mm("tf32_bcol_32x32x16_w2_s2", T, (64, 64, 64), (32, 32, 16), 2, 2, b_col=True)
_mm("tf32_acol_32x32x32_w4_s3", T, (64, 64, 96), (32, 32, 32), 4, 3, a_col=True)
_mm("tf32_64x64x32_w2_s1", T, (64, 64, 64), (64, 64, 32), 2, 1)
_mm("tf32_chain_16x64x32_w8_s2_edge", T, (30, 100, 70), (16, 64, 32), 8, 2, mode=1)
# one program each, a few hundred load wavefronts (the size of the held-back launch's 224):
# stages, warps, K tails, a single K step
_mm("tiny_f16_32x32x32_w2_s2_k64", F, (32, 32, 64), (32, 32, 32), 2, 2)
_mm("tiny_f16_32x32x32_w2_s3_k64", F, (32, 32, 64), (32, 32, 32), 2, 3)
_mm("tiny_f16_32x32x32_w4_s3_k64", F, (32, 32, 64), (32, 32, 32), 4, 3)
_mm("tiny_f16_32x32x32_w2_s4_k96", F, (32, 32, 96), (32, 32, 32), 2, 4)
_mm("tiny_f16_32x32x16_w2_s2_k50", F, (32, 32, 50), (32, 32, 16), 2, 2)
_mm("tiny_f16_32x64x32_w2_s3_k32", F, (32, 64, 32), (32, 64, 32), 2, 3)
_mm("tiny_bf16_16x32x64_w2_s2_k64", B, (16, 32, 64), (16, 32, 64), 2, 2)
# two dots (attention-like): QK^T with K read transposed, then P V with P from registers
_attn("attn_f16_32x32_d64_w2", F, 128, 32, 32, 64, 2, 2)
_attn("attn_f16_16x32_d64_w4", F, 96, 16, 32, 64, 4, 2)
_attn("attn_f16_64x64_d64_w2", F, 128, 64, 64, 64, 2, 3)
_attn("attn_bf16_32x64_d32_w4_edge", B, 100, 32, 64, 32, 4, 2)
_attn("attn_f16_32x16_d128_w2", F, 64, 32, 16, 128, 2, 1)
