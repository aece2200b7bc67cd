// Issue 30, probe lab 3: the project's own probes of what probe lab 2 left assumed: the 64-bit
// generic atomics on the CTA's own shared memory other than add, exchange, min.s64 and xor
// (ATOM.E.*.64 then its fallback); |x|, -x, min and max of NaN doubles; doubles to and from
// bf16 (NaNs, rounding). Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../probes3.sm_90.cubin probes3.cu
#include <cstdint>

// generic 64-bit atomics: 64 threads, the shared words' pointer generic (alias: a kernel
// parameter that is 0 could have replaced it); mode 0 lane t on word t, 1 every lane of warp
// w on word w, 2 lanes 2k and 2k + 1 on word k. in: the 64 words' first values, then each
// lane's operand. out: the low words after, the high words after, then each lane's old value
// (low words, then high words)
__device__ __forceinline__ int word_of(int t, int mode) {
  return mode == 0 ? t : mode == 1 ? t >> 5 : t >> 1;
}
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
GATOM64(gatom_max_s64, "atom.max.s64")
GATOM64(gatom_min_u64, "atom.min.u64")
GATOM64(gatom_max_u64, "atom.max.u64")
GATOM64(gatom_and64, "atom.and.b64")
GATOM64(gatom_or64, "atom.or.b64")

// NaN doubles: thread t takes a = in[t], b = in[n + t] (n threads in all) and writes 6
// doubles as 12 words: |a|, -a, min(a, b), max(a, b), and the bf16 of a (cvt.rn.bf16.f64)
// widened back (cvt.f64.bf16) beside the bf16 itself
extern "C" __global__ void nan_misc(unsigned *out, const double *in) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, n = gridDim.x * blockDim.x;
  double a = in[t], b = in[n + t], r[5];
  unsigned short h;
  asm("abs.f64 %0, %1;" : "=d"(r[0]) : "d"(a));
  asm("neg.f64 %0, %1;" : "=d"(r[1]) : "d"(a));
  asm("min.f64 %0, %1, %2;" : "=d"(r[2]) : "d"(a), "d"(b));
  asm("max.f64 %0, %1, %2;" : "=d"(r[3]) : "d"(a), "d"(b));
  asm("cvt.rn.bf16.f64 %0, %1;" : "=h"(h) : "d"(a));
  asm("cvt.f64.bf16 %0, %1;" : "=d"(r[4]) : "h"((unsigned short)__double2loint(b)));
#pragma unroll
  for (int k = 0; k < 5; ++k) {
    out[2 * k * n + t] = (unsigned)__double2loint(r[k]);
    out[(2 * k + 1) * n + t] = (unsigned)__double2hiint(r[k]);
  }
  out[10 * n + t] = h;
}
