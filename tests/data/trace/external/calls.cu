// shmem's own kernels: calls to functions outside the cubin (printf's vprintf, assert's
// __assertfail), with shared-memory accesses before and after them.
#include <cassert>
#include <cstdio>

// printf's return value kept as data: every address stays exact
extern "C" __global__ void printf_value(float *out) {
  __shared__ float s[1024];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  int n = printf("thread %d sees %f\n", threadIdx.x, s[(threadIdx.x * 32) % 1024]);
  s[(threadIdx.x * 2) % 1024] = n;
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x * 33) % 1024];
}

// printf's return value in a shared address: that request cannot be exact
extern "C" __global__ void printf_address(float *out) {
  __shared__ float s[1024];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  int n = printf("thread %d\n", threadIdx.x);
  out[threadIdx.x] = s[(threadIdx.x + n) % 1024];
}

// an assert: a launch that breaks it stops the trace at its line
extern "C" __global__ void asserted(float *out, int limit) {
  __shared__ float s[1024];
  assert(threadIdx.x < limit);
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x * 2) % 1024];
}
