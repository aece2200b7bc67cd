// Issues 27/29/30, probe lab 2: the project's own probes of what the H200 had not yet been
// measured computing: MUFU.TANH (float, half and bf16 pairs), MUFU.RCP64H and MUFU.RSQ64H
// (the seeds of double division and square root); NaN payloads, signs and quieting through
// double arithmetic, the half-to-float conversions (HADD2.F32, F2F.F64.F16) and the
// widening and narrowing F2F; generic atomics (ATOM.E) other than add and compare-and-swap
// on the CTA's own shared memory; shuffles that read a lane that has exited.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../probes2.sm_90.cubin probes2.cu
#include <cstdint>

// rows of n words: tanh.approx.f32 of the word, tanh.approx.f16x2 and tanh.approx.bf16x2 of
// its two halves (MUFU.TANH, MUFU.TANH.F16, MUFU.TANH.BF16)
extern "C" __global__ void mufu_tanh(unsigned *out, const unsigned *in) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  unsigned x = in[t], h, b;
  float f;
  asm("tanh.approx.f32 %0, %1;" : "=f"(f) : "f"(__uint_as_float(x)));
  asm("tanh.approx.f16x2 %0, %1;" : "=r"(h) : "r"(x));
  asm("tanh.approx.bf16x2 %0, %1;" : "=r"(b) : "r"(x));
  out[t] = __float_as_uint(f);
  out[n + t] = h;
  out[2 * n + t] = b;
}

// rows of n doubles: rcp.approx.ftz.f64 (MUFU.RCP64H of the high word, the low word 0) and
// rsqrt.approx.ftz.f64 (MUFU.RSQ64H) of each double
extern "C" __global__ void mufu_f64(double *out, const double *in) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  double x = in[t], r, s;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x));
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(s) : "d"(x));
  out[t] = r;
  out[n + t] = s;
}

// the dense dumps (lab/dense.cu launches it; no launch of launches.json): element i's
// argument is first + i * stride (fn bit 8: a hash of first + i instead); fn 0 tanh.approx.f32,
// 1 the high word of rcp.approx.ftz.f64 of the double whose high word is the argument (low
// word 0), 2 the same of rsqrt.approx.ftz.f64, 3 tanh.approx.f16x2, 4 tanh.approx.bf16x2
extern "C" __global__ void mufu_dense(unsigned *out, unsigned fn, unsigned first,
                                      unsigned stride) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x, x = first + i * stride, r = 0;
  if (fn & 0x100) {
    x = first + i;
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
  }
  switch (fn & 0xff) {
  case 0: { float f; asm("tanh.approx.f32 %0, %1;" : "=f"(f) : "f"(__uint_as_float(x)));
            r = __float_as_uint(f); break; }
  case 1: { double d; asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(d)
                          : "d"(__hiloint2double((int)x, 0)));
            r = (unsigned)__double2hiint(d); break; }
  case 2: { double d; asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(d)
                          : "d"(__hiloint2double((int)x, 0)));
            r = (unsigned)__double2hiint(d); break; }
  case 3: asm("tanh.approx.f16x2 %0, %1;" : "=r"(r) : "r"(x)); break;
  case 4: asm("tanh.approx.bf16x2 %0, %1;" : "=r"(r) : "r"(x)); break;
  }
  out[i] = r;
}

// rows of n doubles (DADD, DMUL, DFMA on NaNs): a + b, a - b, a * b, -a * b, fma(a, b, c),
// fma(a, b, -c), a + b rounded toward zero, a * b toward minus infinity, fma(a, b, c) toward
// plus infinity
extern "C" __global__ void nan_double(double *out, const double *a, const double *b,
                                      const double *c) {
  int t = threadIdx.x, n = blockDim.x;
  double x = a[t], y = b[t], z = c[t], r[9];
  asm("add.rn.f64 %0, %1, %2;" : "=d"(r[0]) : "d"(x), "d"(y));
  asm("sub.rn.f64 %0, %1, %2;" : "=d"(r[1]) : "d"(x), "d"(y));
  asm("mul.rn.f64 %0, %1, %2;" : "=d"(r[2]) : "d"(x), "d"(y));
  asm("{ .reg .f64 m; neg.f64 m, %1; mul.rn.f64 %0, m, %2; }" : "=d"(r[3]) : "d"(x), "d"(y));
  asm("fma.rn.f64 %0, %1, %2, %3;" : "=d"(r[4]) : "d"(x), "d"(y), "d"(z));
  asm("{ .reg .f64 m; neg.f64 m, %3; fma.rn.f64 %0, %1, %2, m; }"
      : "=d"(r[5]) : "d"(x), "d"(y), "d"(z));
  asm("add.rz.f64 %0, %1, %2;" : "=d"(r[6]) : "d"(x), "d"(y));
  asm("mul.rm.f64 %0, %1, %2;" : "=d"(r[7]) : "d"(x), "d"(y));
  asm("fma.rp.f64 %0, %1, %2, %3;" : "=d"(r[8]) : "d"(x), "d"(y), "d"(z));
#pragma unroll
  for (int k = 0; k < 9; ++k) out[k * n + t] = r[k];
}

// rows of n words (conversions of NaNs): cvt.f64.f32 of f (two words: low, high),
// cvt.rn.f32.f64 and cvt.rz.f32.f64 of d, cvt.rn.f16.f64 of d, cvt.f32.f16 of h's low and
// high halves (HADD2.F32), cvt.f64.f16 of h's low half (F2F.F64.F16: two words), cvt.f32.bf16
// of h's high half, cvt.rn.f16.f32 and cvt.rn.bf16.f32 of f
extern "C" __global__ void nan_convert(unsigned *out, const float *f, const double *d,
                                       const unsigned *h) {
  int t = threadIdx.x, n = blockDim.x;
  float x = f[t];
  double y = d[t];
  unsigned hh = h[t];
  unsigned short lo = hh & 0xffff, hi = hh >> 16, r16, f16, b16;
  double w, wh;
  float n0, n1, e0, e1, e2;
  asm("cvt.f64.f32 %0, %1;" : "=d"(w) : "f"(x));
  asm("cvt.rn.f32.f64 %0, %1;" : "=f"(n0) : "d"(y));
  asm("cvt.rz.f32.f64 %0, %1;" : "=f"(n1) : "d"(y));
  asm("cvt.rn.f16.f64 %0, %1;" : "=h"(r16) : "d"(y));
  asm("cvt.f32.f16 %0, %1;" : "=f"(e0) : "h"(lo));
  asm("cvt.f32.f16 %0, %1;" : "=f"(e1) : "h"(hi));
  asm("cvt.f64.f16 %0, %1;" : "=d"(wh) : "h"(lo));
  asm("cvt.f32.bf16 %0, %1;" : "=f"(e2) : "h"(hi));
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(f16) : "f"(x));
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b16) : "f"(x));
  unsigned r[12] = {(unsigned)__double2loint(w), (unsigned)__double2hiint(w),
                    __float_as_uint(n0), __float_as_uint(n1), r16, __float_as_uint(e0),
                    __float_as_uint(e1), (unsigned)__double2loint(wh),
                    (unsigned)__double2hiint(wh), __float_as_uint(e2), f16, b16};
#pragma unroll
  for (int k = 0; k < 12; ++k) out[k * n + t] = r[k];
}

// generic atomics on the CTA's own shared memory (ATOM.E.*): 64 threads, the pointer to the
// shared words generic (alias, a kernel parameter that is 0, could have replaced it), one pattern a
// launch (mode): 0 lane t on word t, 1 every lane of warp w on word w, 2 lanes 2k and 2k + 1
// on word k. in: the 64 words' first values, then each lane's operand. out: the words after,
// then each lane's old value (64-bit kernels: the low words, then the high words of each)
__device__ __forceinline__ int word_of(int t, int mode) {
  return mode == 0 ? t : mode == 1 ? t >> 5 : t >> 1;
}
#define GATOM32(NAME, PTX)                                                                   \
  extern "C" __global__ void NAME(unsigned *out, const unsigned *in, int mode,              \
                                  unsigned long long alias) {                               \
    __shared__ unsigned s[64];                                                               \
    int t = threadIdx.x;                                                                     \
    s[t] = in[t];                                                                            \
    unsigned v = in[64 + t], old;                                                            \
    unsigned *base = alias ? (unsigned *)alias : s;                                          \
    __syncthreads();                                                                         \
    asm volatile(PTX " %0, [%1], %2;" : "=r"(old) : "l"(base + word_of(t, mode)), "r"(v)     \
                 : "memory");                                                                \
    __syncthreads();                                                                         \
    out[t] = s[t];                                                                           \
    out[64 + t] = old;                                                                       \
  }
GATOM32(gatom_min_s32, "atom.min.s32")
GATOM32(gatom_max_s32, "atom.max.s32")
GATOM32(gatom_min_u32, "atom.min.u32")
GATOM32(gatom_max_u32, "atom.max.u32")
GATOM32(gatom_exch, "atom.exch.b32")
GATOM32(gatom_and, "atom.and.b32")
GATOM32(gatom_or, "atom.or.b32")
GATOM32(gatom_xor, "atom.xor.b32")
GATOM32(gatom_inc, "atom.inc.u32")
GATOM32(gatom_dec, "atom.dec.u32")

#define GATOM64(NAME, PTX)                                                                   \
  extern "C" __global__ void NAME(unsigned *out, const unsigned long long *in, int mode,    \
                                  unsigned long long alias) {                               \
    __shared__ unsigned long long s[64];                                                     \
    int t = threadIdx.x;                                                                     \
    s[t] = in[t];                                                                            \
    unsigned long long v = in[64 + t], old;                                                  \
    unsigned long long *base = alias ? (unsigned long long *)alias : s;                      \
    __syncthreads();                                                                         \
    asm volatile(PTX " %0, [%1], %2;" : "=l"(old) : "l"(base + word_of(t, mode)), "l"(v)     \
                 : "memory");                                                                \
    __syncthreads();                                                                         \
    out[t] = (unsigned)s[t];                                                                 \
    out[64 + t] = (unsigned)(s[t] >> 32);                                                    \
    out[128 + t] = (unsigned)old;                                                            \
    out[192 + t] = (unsigned)(old >> 32);                                                    \
  }
GATOM64(gatom_min_s64, "atom.min.s64")
GATOM64(gatom_exch64, "atom.exch.b64")
GATOM64(gatom_xor64, "atom.xor.b64")

// shuffles that read a lane that has exited: in holds v, b (lane or delta), c (clamp |
// segment mask << 8) and gone (1: the lane returns first) for each thread; the lanes left
// shuffle with __activemask() (SHFL itself takes no mask; up with c ^ 0x1f, as __shfl_up_sync
// writes its clamp). out: 8 rows (value and predicate of idx, up, down, bfly); a lane that
// exited writes nothing
#define SHFL(MODE, R, P, V, B, C, M)                                                         \
  asm volatile("{ .reg .pred q; shfl.sync." MODE ".b32 %0|q, %2, %3, %4, %5; selp.u32 %1, 1, 0, q; }" \
               : "=r"(R), "=r"(P) : "r"(V), "r"(B), "r"(C), "r"(M))
extern "C" __global__ void shfl_exited(unsigned *out, const unsigned *in) {
  int t = threadIdx.x, n = blockDim.x;
  if (in[3 * n + t]) return;
  unsigned v = in[t], b = in[n + t], c = in[2 * n + t], r[4], p[4];
  unsigned m = __activemask();
  SHFL("idx", r[0], p[0], v, b, c, m);
  SHFL("up", r[1], p[1], v, b, c ^ 0x1f, m);  // up's clamp is the lowest lane
  SHFL("down", r[2], p[2], v, b, c, m);
  SHFL("bfly", r[3], p[3], v, b, c, m);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    out[(2 * k) * n + t] = r[k];
    out[(2 * k + 1) * n + t] = p[k];
  }
}
