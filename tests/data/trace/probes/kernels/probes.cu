// Issues 27/29/30: the project's own probes of what the emulator took from the documentation
// and the H200 had not yet computed: float32 minimum and maximum (fminf/fmaxf, .NaN, .ftz) on
// -0/+0, NaN payloads and denormals; the predicate and value of a shuffle from a lane that is
// not executing it or has exited; the fp8 pair conversions on NaN of either sign, infinities
// and past the largest finite value, packed two to a word, and back to half pairs; three-way
// half and bf16 minima (VHMNMX) on ties of -0 and +0; .ftz arithmetic whose exact result lies
// just below the smallest normal; signed 64-bit and 128-bit atomics on shared memory (the
// 128-bit ones with a warp-uniform value); half2 and bf16x2 atomic minima and maxima; the
// TMA reduction copies' minima and maxima of half and bf16 tensors.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../probes.sm_90.cubin probes.cu
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cstdint>

__device__ __forceinline__ unsigned u(float x) { return __float_as_uint(x); }

// rows of n words: fminf, fmaxf, min.NaN, max.NaN, min.ftz, max.ftz, min.ftz.NaN, max.ftz.NaN
extern "C" __global__ void fminmax(unsigned *out, const float *a, const float *b) {
  int t = threadIdx.x, n = blockDim.x;
  float x = a[t], y = b[t], r2, r3, r4, r5, r6, r7;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r2) : "f"(x), "f"(y));
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r3) : "f"(x), "f"(y));
  asm("min.ftz.f32 %0, %1, %2;" : "=f"(r4) : "f"(x), "f"(y));
  asm("max.ftz.f32 %0, %1, %2;" : "=f"(r5) : "f"(x), "f"(y));
  asm("min.ftz.NaN.f32 %0, %1, %2;" : "=f"(r6) : "f"(x), "f"(y));
  asm("max.ftz.NaN.f32 %0, %1, %2;" : "=f"(r7) : "f"(x), "f"(y));
  unsigned r[8] = {u(fminf(x, y)), u(fmaxf(x, y)), u(r2), u(r3), u(r4), u(r5), u(r6), u(r7)};
#pragma unroll
  for (int k = 0; k < 8; ++k) out[k * n + t] = r[k];
}

#define SHFL(MODE, R, P, V, B, C, M)                                                         \
  asm volatile("{ .reg .pred q; shfl.sync." MODE ".b32 %0|q, %2, %3, %4, %5; selp.u32 %1, 1, 0, q; }" \
               : "=r"(R), "=r"(P) : "r"(V), "r"(B), "r"(C), "r"(M))

// in: v, b (lane or delta), c (clamp | segment mask << 8), side (bit 0: the branch taken,
// bit 1: exit first); out: 16 rows (value and predicate of idx, up, down, bfly; converged
// on the lanes left, then on each side of a branch); a lane that exited writes nothing
extern "C" __global__ void shfl_pred(unsigned *out, const unsigned *in) {
  int t = threadIdx.x, n = blockDim.x;
  unsigned v = in[t], b = in[n + t], c = in[2 * n + t], side = in[3 * n + t];
  if (side & 2) return;
  unsigned r[8], p[8], m = __activemask();
  SHFL("idx", r[0], p[0], v, b, c, m);
  SHFL("up", r[1], p[1], v, b & 31, c, m);
  SHFL("down", r[2], p[2], v, b & 31, c, m);
  SHFL("bfly", r[3], p[3], v, b & 31, c, m);
  unsigned w = v * 3u + 1u;
  if (side & 1) {
    unsigned mm = __activemask();
    SHFL("idx", r[4], p[4], w, b, c, mm);
    SHFL("up", r[5], p[5], w, b & 31, c, mm);
    SHFL("down", r[6], p[6], w, b & 31, c, mm);
    SHFL("bfly", r[7], p[7], w, b & 31, c, mm);
  } else {
    unsigned mm = __activemask();
    SHFL("bfly", r[4], p[4], w, b & 31, c, mm);
    SHFL("idx", r[5], p[5], w, b, c, mm);
    SHFL("down", r[6], p[6], w, b & 31, c, mm);
    SHFL("up", r[7], p[7], w, b & 31, c, mm);
  }
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    out[(2 * k) * n + t] = r[k];
    out[(2 * k + 1) * n + t] = p[k];
  }
}

// rows: e4m3x2 and e5m2x2 of (a, b) packed in one word, e4m3x2 and e5m2x2 of the half pair
// h packed in one word, each of the four alone (the high 16 bits zero)
extern "C" __global__ void fp8_pack(unsigned *out, const float *a, const float *b,
                                    const unsigned *h) {
  int t = threadIdx.x, n = blockDim.x;
  float x = a[t], y = b[t];
  unsigned hh = h[t];
  unsigned short e0, e1, e2, e3;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(e0) : "f"(x), "f"(y));
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(e1) : "f"(x), "f"(y));
  asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(e2) : "r"(hh));
  asm("cvt.rn.satfinite.e5m2x2.f16x2 %0, %1;" : "=h"(e3) : "r"(hh));
  unsigned w0, w1;
  asm("mov.b32 %0, {%1, %2};" : "=r"(w0) : "h"(e0), "h"(e1));
  asm("mov.b32 %0, {%1, %2};" : "=r"(w1) : "h"(e3), "h"(e2));
  out[t] = w0;
  out[n + t] = w1;
  out[2 * n + t] = e0;
  out[3 * n + t] = e1;
  out[4 * n + t] = e2;
  out[5 * n + t] = e3;
}

// the same with .relu (a negative result or NaN becomes 0)
extern "C" __global__ void fp8_relu(unsigned *out, const float *a, const float *b,
                                    const unsigned *h) {
  int t = threadIdx.x, n = blockDim.x;
  float x = a[t], y = b[t];
  unsigned hh = h[t];
  unsigned short e0, e1, e2, e3;
  asm("cvt.rn.satfinite.relu.e4m3x2.f32 %0, %1, %2;" : "=h"(e0) : "f"(x), "f"(y));
  asm("cvt.rn.satfinite.relu.e5m2x2.f32 %0, %1, %2;" : "=h"(e1) : "f"(x), "f"(y));
  asm("cvt.rn.satfinite.relu.e4m3x2.f16x2 %0, %1;" : "=h"(e2) : "r"(hh));
  asm("cvt.rn.satfinite.relu.e5m2x2.f16x2 %0, %1;" : "=h"(e3) : "r"(hh));
  out[t] = e0 | ((unsigned)e1 << 16);
  out[n + t] = e2 | ((unsigned)e3 << 16);
}

// every pair of bytes in p back to a half pair: rows e4m3, e5m2
extern "C" __global__ void fp8_unpack(unsigned *out, const unsigned short *p) {
  int t = threadIdx.x, n = blockDim.x;
  unsigned short q = p[t];
  unsigned r0, r1;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r0) : "h"(q));
  asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(r1) : "h"(q));
  out[t] = r0;
  out[n + t] = r1;
}

__device__ __forceinline__ unsigned hw(__half2 x) { return *reinterpret_cast<unsigned *>(&x); }
__device__ __forceinline__ unsigned bw(__nv_bfloat162 x) {
  return *reinterpret_cast<unsigned *>(&x);
}

// three-way packed minima and maxima (ptxas fuses two into one VHMNMX): rows half min, half
// max, bf16 min, bf16 max; min3_nan the same with _nan (VHMNMX.NAN)
#define MIN3_ARGS                                                                            \
  int t = threadIdx.x, n = blockDim.x;                                                       \
  unsigned ia = in[t], ib = in[n + t], ic = in[2 * n + t];                                   \
  __half2 a = *reinterpret_cast<__half2 *>(&ia), b = *reinterpret_cast<__half2 *>(&ib),      \
          c = *reinterpret_cast<__half2 *>(&ic);                                             \
  __nv_bfloat162 x = *reinterpret_cast<__nv_bfloat162 *>(&ia),                               \
                 y = *reinterpret_cast<__nv_bfloat162 *>(&ib),                               \
                 z = *reinterpret_cast<__nv_bfloat162 *>(&ic)

extern "C" __global__ void min3(unsigned *out, const unsigned *in) {
  MIN3_ARGS;
  unsigned r[4] = {hw(__hmin2(__hmin2(a, b), c)), hw(__hmax2(__hmax2(a, b), c)),
                   bw(__hmin2(__hmin2(x, y), z)), bw(__hmax2(__hmax2(x, y), z))};
#pragma unroll
  for (int k = 0; k < 4; ++k) out[k * n + t] = r[k];
}

extern "C" __global__ void min3_nan(unsigned *out, const unsigned *in) {
  MIN3_ARGS;
  unsigned r[4] = {hw(__hmin2_nan(__hmin2_nan(a, b), c)), hw(__hmax2_nan(__hmax2_nan(a, b), c)),
                   bw(__hmin2_nan(__hmin2_nan(x, y), z)), bw(__hmax2_nan(__hmax2_nan(x, y), z))};
#pragma unroll
  for (int k = 0; k < 4; ++k) out[k * n + t] = r[k];
}

#define F2(OP, R, X, Y) asm(OP " %0, %1, %2;" : "=f"(R) : "f"(X), "f"(Y))
#define F3(OP, R, X, Y, Z) asm(OP " %0, %1, %2, %3;" : "=f"(R) : "f"(X), "f"(Y), "f"(Z))

// .ftz on results just below, at and above the smallest normal: rows mul, add, fma (rn, rz,
// rm, rp) with .ftz, then mul, add and fma without it
extern "C" __global__ void ftz_edges(unsigned *out, const float *a, const float *b,
                                     const float *c) {
  int t = threadIdx.x, n = blockDim.x;
  float x = a[t], y = b[t], z = c[t], r[15];
  F2("mul.rn.ftz.f32", r[0], x, y);
  F2("mul.rz.ftz.f32", r[1], x, y);
  F2("mul.rm.ftz.f32", r[2], x, y);
  F2("mul.rp.ftz.f32", r[3], x, y);
  F2("add.rn.ftz.f32", r[4], x, z);
  F2("add.rz.ftz.f32", r[5], x, z);
  F2("add.rm.ftz.f32", r[6], x, z);
  F2("add.rp.ftz.f32", r[7], x, z);
  F3("fma.rn.ftz.f32", r[8], x, y, z);
  F3("fma.rz.ftz.f32", r[9], x, y, z);
  F3("fma.rm.ftz.f32", r[10], x, y, z);
  F3("fma.rp.ftz.f32", r[11], x, y, z);
  F2("mul.rn.f32", r[12], x, y);
  F2("add.rn.f32", r[13], x, z);
  F3("fma.rn.f32", r[14], x, y, z);
#pragma unroll
  for (int k = 0; k < 15; ++k) out[k * n + t] = u(r[k]);
}

struct __align__(16) Pair {
  unsigned long long lo, hi;
};

// signed and unsigned 64-bit atomics on shared memory, each lane on its own word (the old
// values) and all lanes on one word (what is left); 128-bit exchange and compare-and-swap (on
// the partner lane's word t ^ 1), the new value warp-uniform (parameters); out: olds[8][n],
// the words left, the 128-bit olds and words left, the shared words
extern "C" __global__ void atomics_shared(long long *out, const long long *v,
                                          const long long *init, unsigned long long ulo,
                                          unsigned long long uhi, unsigned long long clo,
                                          unsigned long long chi) {
  const Pair uni{ulo, uhi}, cmp{clo, chi};
  __shared__ long long own[8][128];
  __shared__ long long one[8];
  __shared__ Pair wide[128];
  int t = threadIdx.x, n = blockDim.x;
  long long x = v[t];
#pragma unroll
  for (int k = 0; k < 8; ++k) own[k][t] = init[k * n + t];
  if (t < 8) one[t] = init[8 * n + t];
  wide[t].lo = (unsigned long long)init[t];
  wide[t].hi = (unsigned long long)init[n + t];
  __syncthreads();
  typedef unsigned long long U;
  long long o[8];
  o[0] = atomicMin(&own[0][t], x);
  o[1] = atomicMax(&own[1][t], x);
  o[2] = (long long)atomicAdd((U *)&own[2][t], (U)x);
  o[3] = (long long)atomicMin((U *)&own[3][t], (U)x);
  o[4] = (long long)atomicMax((U *)&own[4][t], (U)x);
  o[5] = (long long)atomicExch((U *)&own[5][t], (U)x);
  o[6] = (long long)atomicCAS((U *)&own[6][t], (U)init[9 * n + t], (U)x);
  o[7] = (long long)atomicXor((U *)&own[7][t], (U)x);
  atomicMin(&one[0], x);
  atomicMax(&one[1], x);
  atomicMin((U *)&one[2], (U)x);
  atomicMax((U *)&one[3], (U)x);
  atomicAnd((U *)&one[4], (U)x);
  atomicOr((U *)&one[5], (U)x);
  atomicAdd((U *)&one[6], (U)x);
  Pair e = atomicExch(&wide[t], (t & 1) ? uni : Pair{(U)x, (U)t});
  const Pair mine{(U)v[t ^ 1], (U)(t ^ 1)};  // what the partner lane swapped in, if even
  Pair f = atomicCAS(&wide[t ^ 1], (t & 2) ? cmp : mine, uni);
  __syncthreads();
#pragma unroll
  for (int k = 0; k < 8; ++k) out[k * n + t] = o[k];
#pragma unroll
  for (int k = 0; k < 8; ++k) out[8 * n + k * n + t] = own[k][t];
  out[16 * n + t] = (long long)e.lo;
  out[17 * n + t] = (long long)e.hi;
  out[18 * n + t] = (long long)f.lo;
  out[19 * n + t] = (long long)f.hi;
  out[20 * n + t] = (long long)wide[t].lo;
  out[21 * n + t] = (long long)wide[t].hi;
  if (t < 8) out[22 * n + t] = one[t];
}

// half2 and bf16x2 atomic minima and maxima on global memory (sm_90's vector forms), each
// lane on its own word of g (rows: half min, half max, bf16 min, bf16 max; initialised from
// the launch's input); out: the old words of the half and bf16 minimum with its old value
#define RED2(OP, P, X)                                                                        \
  asm volatile("red.global.v2." OP ".noftz [%0], {%1, %2};" ::"l"(P), "h"((unsigned short)(X)), \
               "h"((unsigned short)((X) >> 16)) : "memory")
extern "C" __global__ void atomics_half(unsigned *g, unsigned *out, const unsigned *in) {
  int t = threadIdx.x, n = blockDim.x;
  unsigned x = in[t];
  RED2("f16.min", &g[t], x);
  RED2("f16.max", &g[n + t], x);
  RED2("bf16.min", &g[2 * n + t], x);
  RED2("bf16.max", &g[3 * n + t], x);
  unsigned short a, b, c, d;
  asm volatile("atom.global.v2.f16.min.noftz {%0, %1}, [%2], {%3, %4};"
               : "=h"(a), "=h"(b) : "l"(&g[4 * n + t]), "h"((unsigned short)x),
                 "h"((unsigned short)(x >> 16)) : "memory");
  asm volatile("atom.global.v2.bf16.max.noftz {%0, %1}, [%2], {%3, %4};"
               : "=h"(c), "=h"(d) : "l"(&g[5 * n + t]), "h"((unsigned short)x),
                 "h"((unsigned short)(x >> 16)) : "memory");
  out[t] = a | ((unsigned)b << 16);
  out[n + t] = c | ((unsigned)d << 16);
}

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

#define TMA_RED(OP, MAP, TILE)                                                                 \
  asm volatile("cp.reduce.async.bulk.tensor.1d.global.shared::cta." OP                        \
               ".tile.bulk_group [%0, {%1}], [%2];" ::"l"(&MAP), "r"(0), "r"(smem_addr(TILE)) \
               : "memory")

// the TMA reduction copies' minimum and maximum: 256 half (h) and bf16 (b) elements from
// shared memory combined into 1-D tensors of 256 elements (each map's own buffer)
extern "C" __global__ void tma_minmax(const __grid_constant__ CUtensorMap hmin,
                                      const __grid_constant__ CUtensorMap hmax,
                                      const __grid_constant__ CUtensorMap bmin,
                                      const __grid_constant__ CUtensorMap bmax,
                                      const unsigned short *h, const unsigned short *b) {
  __shared__ __align__(128) unsigned short th[256];
  __shared__ __align__(128) unsigned short tb[256];
  for (int k = threadIdx.x; k < 256; k += blockDim.x) {
    th[k] = h[k];
    tb[k] = b[k];
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    TMA_RED("min", hmin, th);
    TMA_RED("max", hmax, th);
    TMA_RED("min", bmin, tb);
    TMA_RED("max", bmax, tb);
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

#define MMA_K32(TYPES, D, A, B, C)                                                            \
  asm("mma.sync.aligned.m16n8k32.row.col" TYPES                                              \
      " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"                    \
      : "=r"(D[0]), "=r"(D[1]), "=r"(D[2]), "=r"(D[3])                                          \
      : "r"(A[0]), "r"(A[1]), "r"(A[2]), "r"(A[3]), "r"(B[0]), "r"(B[1]), "r"(C[0]), "r"(C[1]), \
        "r"(C[2]), "r"(C[3]))

// integer tensor cores (IMMA): the fragment layouts PTX documents for mma.sync, checked only
// against the documentation so far; rows of n words: d of m16n8k32 s8 x s8, u8 x s8 with
// .satfinite, u8 x u8, then m16n8k16 s8 x u8 (each 4 rows)
extern "C" __global__ void imma(int *out, const unsigned *a, const unsigned *b, const int *c) {
  int t = threadIdx.x, n = blockDim.x;
  unsigned fa[4], fb[2];
  int fc[4], d[4][4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    fa[k] = a[k * n + t];
    fc[k] = c[k * n + t];
  }
  fb[0] = b[t];
  fb[1] = b[n + t];
  MMA_K32(".s32.s8.s8.s32", d[0], fa, fb, fc);
  MMA_K32(".satfinite.s32.u8.s8.s32", d[1], fa, fb, fc);
  MMA_K32(".s32.u8.u8.s32", d[2], fa, fb, fc);
  asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.u8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%7, %8, %9, %10};"
      : "=r"(d[3][0]), "=r"(d[3][1]), "=r"(d[3][2]), "=r"(d[3][3])
      : "r"(fa[0]), "r"(fa[1]), "r"(fb[0]), "r"(fc[0]), "r"(fc[1]), "r"(fc[2]), "r"(fc[3]));
#pragma unroll
  for (int m = 0; m < 4; ++m)
#pragma unroll
    for (int k = 0; k < 4; ++k) out[(4 * m + k) * n + t] = d[m][k];
}
