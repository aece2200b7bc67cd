// shmem's own probes for issue 30: what a shared atomic's compare-and-swap loop costs per
// execution (64-bit and 32-bit ATOMS.CAST.SPIN, ATOMS.CAS.64, ATOMS.EXCH.64) and how the
// loops of several warps interleave under contention (float, double, __half2).
// Lane l of every warp takes part when bit l of `mask` is set; it updates
// bins[(l * stride + (l >> 4) * hoff + (l & 1) * poff) % nb]. With `skew` > 0, warp w first
// waits w * skew clock cycles. out[t] = the old value the atomic returned (its place in the
// order of service; 0 for __half2), out[T + t] = the cycle, counted from the block's start,
// at which thread t got it back; out[2T + i] = bins[i] (T = the block's threads).
#include <cuda_fp16.h>

#define PROLOGUE(type, zero)                                                            \
  __shared__ type bins[128];                                                           \
  int t = threadIdx.x, T = blockDim.x, l = t % 32, w = t / 32;                         \
  for (int i = t; i < 128; i += T) bins[i] = zero;                                     \
  __syncthreads();                                                                     \
  long long t0 = clock64();                                                            \
  if (skew > 0)                                                                        \
    while (clock64() - t0 < (long long)w * skew) {                                     \
    }                                                                                  \
  int at = (l * stride + (l >> 4) * hoff + (l & 1) * poff) % nb;                       \
  bool on = (mask >> l) & 1u;

#define EPILOGUE(value)                                                                 \
  out[t] = on ? (value) : ~0ull;                                                       \
  out[T + t] = (unsigned long long)(clock64() - t0);                                   \
  __syncthreads();                                                                     \
  for (int i = t; i < 128; i += T) out[2 * T + i] = bins_bits(bins[i]);

__device__ unsigned long long bins_bits(double v) { return __double_as_longlong(v); }
__device__ unsigned long long bins_bits(float v) { return __float_as_uint(v); }
__device__ unsigned long long bins_bits(__half2 v) { return *(unsigned *)&v; }
__device__ unsigned long long bins_bits(unsigned long long v) { return v; }

extern "C" __global__ void al_dadd(unsigned long long *out, unsigned mask, int stride, int hoff,
                                   int poff, int nb, int skew) {
  PROLOGUE(double, 0.)
  double old = 0.;
  if (on) old = atomicAdd(&bins[at], 1.);  // LDS.64 + DADD + ATOMS.CAST.SPIN.64 loop
  EPILOGUE((unsigned long long)old)
}

extern "C" __global__ void al_fadd(unsigned long long *out, unsigned mask, int stride, int hoff,
                                   int poff, int nb, int skew) {
  PROLOGUE(float, 0.f)
  float old = 0.f;
  if (on) old = atomicAdd(&bins[at], 1.f);  // LDS + FADD + ATOMS.CAST.SPIN loop
  EPILOGUE((unsigned long long)old)
}

extern "C" __global__ void al_h2add(unsigned long long *out, unsigned mask, int stride, int hoff,
                                    int poff, int nb, int skew) {
  PROLOGUE(__half2, __floats2half2_rn(0.f, 0.f))
  // the old value left unused, as in tests/data/trace/everyday's ev_h2add: ATOM P0, RZ, ...
  if (on) atomicAdd(&bins[at], __floats2half2_rn(1.f, 2.f));  // ATOM, QSPC, CAS loop
  EPILOGUE(0ull)
}

// the native 64-bit forms, one execution each: ATOMS.EXCH.64, then ATOMS.CAS.64 (compare 0)
extern "C" __global__ void al_x64(unsigned long long *out, unsigned mask, int stride, int hoff,
                                  int poff, int nb, int skew) {
  PROLOGUE(unsigned long long, 0ull)
  unsigned long long old = 0;
  if (on) old = atomicExch(&bins[at], 0ull);
  __syncthreads();
  if (on) old += atomicCAS(&bins[at], 0ull, (unsigned long long)t + 1);
  EPILOGUE(old)
}
