// shmem trace emulator tests: library-style code paths (64-bit division, math functions,
// CAS loops, block-wide votes, match/redux, bit tricks, half2, local arrays).
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../emu_more_sm90.cubin emu_more.cu
#include <cstdint>
#include <cuda_fp16.h>

__device__ float atomic_max_float(float *addr, float v) {
  int *p = reinterpret_cast<int *>(addr);
  int old = *p, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(p, assumed, __float_as_int(v));
  } while (old != assumed);
  return __int_as_float(old);
}

// 128 threads; out has 16 words per thread
__global__ void emu_library(const int *in, long long *out64, unsigned *outu, float *outf,
                            long long divisor) {
  __shared__ float best;
  __shared__ unsigned hist[8];
  unsigned t = threadIdx.x, lane = t % 32;
  int v = in[t];
  if (t == 0) best = -1e30f;
  if (t < 8) hist[t] = 0;
  __syncthreads();
  long long big = (long long)v * 1000003LL + t;
  out64[t * 4 + 0] = big / divisor;
  out64[t * 4 + 1] = big % divisor;
  unsigned long long ub = (unsigned long long)(unsigned)v * 77777ULL;
  out64[t * 4 + 2] = (long long)(ub / 13ULL);
  out64[t * 4 + 3] = (long long)__brevll(ub) ^ (long long)__popcll(ub);
  float x = (float)(v % 1000) / 100.0f;
  outf[t * 4 + 0] = x / (float)(t + 1);
  outf[t * 4 + 1] = __fsqrt_rn(x + 1.0f);
  outf[t * 4 + 2] = fmaxf(x, 3.5f) - fminf(x, 2.25f);
  atomic_max_float(&best, x);
  atomicAdd(&hist[v & 7], 1u);
  int cnt = __syncthreads_count(v & 1);
  int any = __syncthreads_or(v > 900000);
  unsigned same = __match_any_sync(0xffffffffu, v & 3);
  unsigned total = __reduce_add_sync(0xffffffffu, (unsigned)(v & 255));
  unsigned mx = __reduce_max_sync(0xffffffffu, (unsigned)(v & 1023));
  outu[t * 8 + 0] = cnt;
  outu[t * 8 + 1] = any;
  outu[t * 8 + 2] = same;
  outu[t * 8 + 3] = total;
  outu[t * 8 + 4] = mx;
  outu[t * 8 + 5] = __clz(v) + 100 * __ffs(v);
  int local[16];
  for (int i = 0; i < 16; ++i) local[i] = v ^ (i * 7);
  outu[t * 8 + 6] = local[(v >> 3) & 15] + local[t & 15];
  __half2 h = __floats2half2_rn(x, -x * 0.5f);
  h = __hfma2(h, h, __float2half2_rn(1.0f));
  outf[t * 4 + 3] = __low2float(h) + __high2float(h);
  __syncthreads();
  if (t == 0) { outu[128 * 8] = __float_as_uint(best); }
  if (t < 8) outu[128 * 8 + 1 + t] = hist[t];
  outu[t * 8 + 7] = __shfl_up_sync(0xffffffffu, v, 3, 16) ^ __shfl_sync(0xffffffffu, v, 31 - lane, 8);
}

// a generic pointer that points into shared memory (LD/ST through the shared window)
__device__ __noinline__ float generic_read(const float *p, int i) { return p[i]; }
__device__ __noinline__ void generic_write(float *p, int i, float v) { p[i] = v; }
__global__ void emu_generic(float *out, int k) {
  __shared__ float s[64];
  generic_write((k & 2) ? s : out + 64, threadIdx.x, (float)threadIdx.x);
  __syncthreads();
  const float *p = (k & 1) ? s : out;
  out[threadIdx.x] = generic_read(p, threadIdx.x ^ k);
}
