// shmem's own kernels for issue 20: shared-memory atomics of every type the CUDA headers
// lower to native ATOMS forms or to compare-and-swap loops, under contention.
// Every kernel: bins[64] in shared memory, thread t updates bins[(t + k) % nb], then the
// bins are written to out (the first parameter) so that the values can be compared too.
#include <cuda_fp16.h>

extern "C" __global__ void ev_fadd(float *out, int nb) {
  __shared__ float bins[64];
  int t = threadIdx.x;
  for (int i = t; i < 64; i += blockDim.x) bins[i] = 0.f;
  __syncthreads();
  atomicAdd(&bins[t % nb], (float)t);  // LDS + FADD + ATOMS.CAST.SPIN loop
  __syncthreads();
  for (int i = t; i < 64; i += blockDim.x) out[i] = bins[i];
}

extern "C" __global__ void ev_dadd(double *out, int nb) {
  __shared__ double bins[64];
  int t = threadIdx.x;
  for (int i = t; i < 64; i += blockDim.x) bins[i] = 0.;
  __syncthreads();
  atomicAdd(&bins[t % nb], (double)t + 0.5);  // LDS.64 + DADD + ATOMS.CAST.SPIN.64 loop
  __syncthreads();
  for (int i = t; i < 64; i += blockDim.x) out[i] = bins[i];
}

extern "C" __global__ void ev_h2add(__half2 *out, int nb) {
  __shared__ __half2 bins[64];
  int t = threadIdx.x;
  for (int i = t; i < 64; i += blockDim.x) bins[i] = __floats2half2_rn(0.f, 0.f);
  __syncthreads();
  atomicAdd(&bins[t % nb], __floats2half2_rn(1.f, 2.f));  // generic ATOM, then a CAS loop
  __syncthreads();
  for (int i = t; i < 64; i += blockDim.x) out[i] = bins[i];
}

extern "C" __global__ void ev_hadd(__half *out, int nb) {
  __shared__ __half bins[64];
  int t = threadIdx.x;
  for (int i = t; i < 64; i += blockDim.x) bins[i] = __float2half(0.f);
  __syncthreads();
  atomicAdd(&bins[t % nb], __float2half(1.f));  // a 32-bit CAS loop on the half's word
  __syncthreads();
  for (int i = t; i < 64; i += blockDim.x) out[i] = bins[i];
}

extern "C" __global__ void ev_u64(unsigned long long *out, int nb) {
  __shared__ unsigned long long bins[64];
  int t = threadIdx.x;
  for (int i = t; i < 64; i += blockDim.x) bins[i] = 0x100000000ull * (i + 1) + i;
  __syncthreads();
  unsigned long long v = 0x100000001ull * t;
  atomicAdd(&bins[t % nb], v);
  atomicMin(&bins[(t + 1) % nb], v);
  atomicMax(&bins[(t + 2) % nb], v);
  atomicAnd(&bins[(t + 3) % nb], ~v);
  atomicOr(&bins[(t + 4) % nb], v << 3);
  atomicXor(&bins[(t + 5) % nb], v * 7);
  atomicExch(&bins[(t + 6) % nb], v + 11);
  atomicCAS(&bins[(t + 7) % nb], v + 11, v);
  __syncthreads();
  for (int i = t; i < 64; i += blockDim.x) out[i] = bins[i];
}

extern "C" __global__ void ev_i64(long long *out, int nb) {
  __shared__ long long bins[64];
  int t = threadIdx.x;
  for (int i = t; i < 64; i += blockDim.x) bins[i] = 5 - i;
  __syncthreads();
  atomicMin(&bins[t % nb], (long long)t - 40);
  atomicMax(&bins[(t + 1) % nb], 20 - (long long)t);
  __syncthreads();
  for (int i = t; i < 64; i += blockDim.x) out[i] = bins[i];
}

extern "C" __global__ void ev_i32(unsigned *out, int nb) {
  __shared__ unsigned bins[64];
  __shared__ unsigned olds[128];
  int t = threadIdx.x;
  for (int i = t; i < 64; i += blockDim.x) bins[i] = i * 3;
  __syncthreads();
  atomicInc(&bins[t % nb], 40u);
  atomicDec(&bins[(t + 1) % nb], 50u);
  atomicCAS(&bins[(t + 2) % nb], (unsigned)t, 9u);
  atomicMin((int *)&bins[(t + 3) % nb], t - 9);
  atomicMax(&bins[(t + 4) % nb], (unsigned)t * 5);
  atomicAnd(&bins[(t + 5) % nb], ~(unsigned)t);
  atomicOr(&bins[(t + 6) % nb], (unsigned)t << 8);
  atomicXor(&bins[(t + 7) % nb], (unsigned)t * 0x01010101u);
  atomicExch((float *)&bins[(t + 8) % nb], (float)t);
  olds[t] = atomicAdd(&bins[(t + 9) % nb], 3u);  // the old value, used
  __syncthreads();
  if (t < 64) out[t] = bins[t] + olds[t] + olds[t + 64];
}

// one compare-and-swap per lane (ATOMS.CAS / ATOMS.CAS.64, no loop): lanes < n, address
// a[(lane * stride) % 64], compare cmp, new value v0 + lane * dv; a[] starts at zero
extern "C" __global__ void ev_cas32(unsigned *out, int n, int stride, int cmp, int v0, int dv) {
  __shared__ unsigned a[64];
  int t = threadIdx.x;
  for (int i = t; i < 64; i += blockDim.x) a[i] = 0;
  __syncthreads();
  unsigned old = 0xffffffffu;
  if (t % 32 < n) old = atomicCAS(&a[(t * stride) % 64], (unsigned)cmp, (unsigned)(v0 + t * dv));
  __syncthreads();
  out[t] = old;
  if (t < 64) out[64 + t] = a[t];
}

extern "C" __global__ void ev_cas64(unsigned long long *out, int n, int stride, int cmp, int v0,
                                    int dv) {
  __shared__ unsigned long long a[64];
  int t = threadIdx.x;
  for (int i = t; i < 64; i += blockDim.x) a[i] = 0;
  __syncthreads();
  unsigned long long old = ~0ull;
  if (t % 32 < n)
    old = atomicCAS(&a[(t * stride) % 64], (unsigned long long)cmp,
                    (unsigned long long)(v0 + t * dv) << 32 | (unsigned)(v0 + t * dv));
  __syncthreads();
  out[t] = old;
  if (t < 64) out[64 + t] = a[t];
}
