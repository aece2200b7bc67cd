// Issues 29/30: kernels that make nvcc (CUDA 13.0, sm_90) emit the SASS that real CUDA code
// reaches and the emulator did not run (the census of /work/scratch/opcensus/cuda): the
// SIMD video instructions, three-way and packed minima and maxima, dot products, warp
// reductions and 64-bit matches on divergent warps, switch jump tables, bf16x2 arithmetic,
// half and bf16 compares written as values, double minimum and maximum. Each writes what it
// computed, so a test compares every value with the H200's. The project's own code.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../cuda90.sm_90.cubin cuda90.cu
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

// VABSDIFF4, VABSDIFF, IDP (dp4a/dp2a), VIMNMX3 and VIMNMX on s16x2/u16x2 with .RELU and
// the predicate outputs of __vibmax: 64 threads, a = in[t], b = in[t + 64], c = in[t + 128]
extern "C" __global__ void video_ops(unsigned *out, const unsigned *in) {
  int t = threadIdx.x;
  unsigned a = in[t], b = in[t + 64], c = in[t + 128];
  int sa = (int)a, sb = (int)b, sc = (int)c;
  unsigned r[40];
  int k = 0;
  r[k++] = __vabsdiffu4(a, b);
  r[k++] = __vsadu4(a, b);
  r[k++] = __vabsdiffs4(a, b);
  r[k++] = __vabsdiffu2(a, b);
  r[k++] = __vabsdiffs2(a, b);
  r[k++] = __sad(sa, sb, c);
  r[k++] = __usad(a, b, c);
  r[k++] = __dp4a(sa, sb, sc);
  r[k++] = __dp4a(a, b, c);
  r[k++] = __dp2a_lo(sa, sb, sc);
  r[k++] = __dp2a_hi(sa, sb, sc);
  r[k++] = __dp2a_lo(a, b, c);
  r[k++] = __dp2a_hi(a, b, c);
  r[k++] = __vimax3_s32(sa, sb, sc);
  r[k++] = __vimax3_u32(a, b, c);
  r[k++] = __vimin3_s32(sa, sb, sc);
  r[k++] = __vimin3_u32(a, b, c);
  r[k++] = __vimax3_s32_relu(sa, sb, sc);
  r[k++] = __vimin3_s32_relu(sa, sb, sc);
  r[k++] = __vimax3_s16x2(a, b, c);
  r[k++] = __vimin3_s16x2(a, b, c);
  r[k++] = __vimax3_u16x2(a, b, c);
  r[k++] = __vimin3_u16x2(a, b, c);
  r[k++] = __vimax3_s16x2_relu(a, b, c);
  r[k++] = __vimin3_s16x2_relu(a, b, c);
  r[k++] = __vimax_s32_relu(sa, sb);
  r[k++] = __vimin_s32_relu(sa, sb);
  r[k++] = __vimax_s16x2_relu(a, b);
  r[k++] = __vimin_s16x2_relu(a, b);
  r[k++] = __vmaxs2(a, b);
  r[k++] = __vminu2(a, b);
  r[k++] = __viaddmax_s16x2(a, b, c);
  r[k++] = __viaddmin_u16x2(a, b, c);
  r[k++] = __viaddmax_s16x2_relu(a, b, c);
  bool p, q;
  r[k] = __vibmax_s32(sa, sb, &p);
  r[k++] += p ? 0x100000u : 0u;
  r[k] = __vibmin_u32(a, b, &p);
  r[k++] ^= p ? 0x80000000u : 0u;
  r[k] = __vibmax_s16x2(a, b, &p, &q);
  r[k++] ^= (p ? 1u : 0u) | (q ? 0x10000u : 0u);
  r[k] = __vibmin_u16x2(a, b, &p, &q);
  r[k++] ^= (p ? 2u : 0u) | (q ? 0x20000u : 0u);
#pragma unroll
  for (int i = 0; i < 38; ++i) out[i * 64 + t] = r[i];
}

// REDUX (.SUM .MIN .MAX and the plain AND, .OR .XOR) and MATCH.ANY/ALL on 32 and 64 bits,
// each on the warp whole and on the lanes a data-dependent branch keeps
extern "C" __global__ void warp_ops(unsigned *out, const unsigned *in, const unsigned long long *wide) {
  int t = threadIdx.x;
  unsigned x = in[t];
  unsigned long long w = wide[t];
  unsigned m = __activemask();
  unsigned *o = out + t;
  o[0] = __reduce_add_sync(m, x);
  o[64] = __reduce_min_sync(m, (int)x);
  o[128] = __reduce_max_sync(m, x);
  o[192] = __reduce_and_sync(m, x);
  o[256] = __reduce_or_sync(m, x);
  o[320] = __reduce_xor_sync(m, x);
  o[384] = __match_any_sync(m, w);
  int pred = 0;
  o[448] = __match_all_sync(m, w, &pred) ^ (pred << 5);
  if (x & 4) {
    unsigned d = __activemask();
    o[512] = __reduce_and_sync(d, x) ^ __reduce_min_sync(d, x);
    o[576] = __reduce_max_sync(d, (int)x) + __reduce_add_sync(d, x);
    o[640] = __match_any_sync(d, w >> 3);
    o[704] = __match_all_sync(d, w & 0xffff00000000ull, &pred) + pred;
  } else {
    o[512] = __reduce_or_sync(__activemask(), x);
  }
}

// BRX: dense switches become jump tables (a constant-bank table of offsets and an indirect
// branch); the lanes of one warp take different cases, and a loop takes them again
extern "C" __global__ void jump_table(int *out, const int *in, int n) {
  int t = threadIdx.x, x = in[t], r;
  switch (x & 7) {
    case 0: r = x * 3; break;
    case 1: r = x ^ 77; break;
    case 2: r = x + 100; break;
    case 3: r = x >> 2; break;
    case 4: r = -x; break;
    case 5: r = x * x; break;
    case 6: r = x | 0x100; break;
    default: r = x - 9;
  }
  for (int k = 0; k < n; ++k) {
    switch ((x + k) % 6) {
      case 0: r += 1; break;
      case 1: r *= 3; break;
      case 2: r ^= k; break;
      case 3: r -= 5; break;
      case 4: r <<= 1; break;
      default: r -= in[(t + k) & 63];
    }
  }
  out[t] = r;
}

// bf16x2 arithmetic (HADD2/HMUL2/HFMA2/HMNMX2 .BF16_V2, .RELU, .NAN) and HSET2 (a compare
// written as 1.0/0.0 per half, half and bf16): 32 threads, three operands each
extern "C" __global__ void bf16_ops(unsigned *out, const __nv_bfloat162 *x, const __half2 *h) {
  int t = threadIdx.x;
  __nv_bfloat162 a = x[t], b = x[t + 32], c = x[t + 64];
  __nv_bfloat162 r[12];
  r[0] = __hadd2(a, b);
  r[1] = __hsub2(a, b);
  r[2] = __hmul2(a, b);
  r[3] = __hfma2(a, b, c);
  r[4] = __hfma2_relu(a, b, c);
  r[5] = __hmax2(a, b);
  r[6] = __hmin2(a, b);
  r[7] = __hmax2_nan(a, b);
  r[8] = __hmin2_nan(a, b);
  r[9] = __heq2(a, b);
  r[10] = __hlt2(a, b);
  r[11] = __hgeu2(a, b);
  for (int i = 0; i < 12; ++i) out[i * 32 + t] = *reinterpret_cast<unsigned *>(&r[i]);
  __half2 p = h[t], q = h[t + 32];
  __half2 s[4] = {__heq2(p, q), __hlt2(p, q), __hgeu2(p, q), __hne2(p, q)};
  for (int i = 0; i < 4; ++i) out[(12 + i) * 32 + t] = *reinterpret_cast<unsigned *>(&s[i]);
  out[16 * 32 + t] = __heq2_mask(p, q) ^ __hlt2_mask(a, b);
}

// double minimum and maximum (DSETP.MIN/.MAX and the selects after them): NaN, infinities,
// -0 against +0, equal values
extern "C" __global__ void double_min_max(double *out, const double *in) {
  int t = threadIdx.x;
  double a = in[t], b = in[t + 64];
  out[t] = fmin(a, b);
  out[t + 64] = fmax(a, b);
  out[t + 128] = fmin(fabs(a), b);
  out[t + 192] = fmax(a, fabs(b));
}
