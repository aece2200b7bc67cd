// Calls that are not inlined, each touching shared memory inside the callee: a __noinline__
// function, a call through a function pointer, a recursion; and a grid kernel whose float
// division (nvcc's slow-path subroutine, called behind a branch on the data) sits in a
// kernel that also calls a function outside the cubin (assert's __assertfail, printf's
// vprintf: CALL.ABS.NOINC through a register, its return point made by LEPC).
//
// build.sh: nvcc -cubin -lineinfo -O3 -arch=sm_80 and -arch=sm_90 (CUDA 13.0)
#include <cassert>
#include <cstdio>

__device__ __noinline__ int store_row(int *s, int i, int v) {
  s[i * 33 % 256] = v;  // the callee's store
  return s[(i + 1) % 256];
}

__device__ __noinline__ int twice(int *s, int i) {
  s[i] = 2 * i;
  return s[i ^ 1];
}

__device__ __noinline__ int thrice(int *s, int i) {
  s[(i * 2) % 256] = 3 * i;
  return s[i];
}

// each level stores one word, n levels deep
__device__ __noinline__ int depth(int *s, int i, int n) {
  if (n == 0) return s[i];
  s[(i + n * 32) % 256] = n;
  return depth(s, i, n - 1) + 1;
}

typedef int (*fn_t)(int *, int);
__device__ fn_t table[2] = {twice, thrice};

__global__ void noinline_call(int *out) {
  __shared__ int s[256];
  int i = threadIdx.x;
  s[i] = i;
  __syncthreads();
  out[i] = store_row(s, i, i + 7);
}

// even lanes call table[which], odd lanes the other
__global__ void pointer_call(int *out, int which) {
  __shared__ int s[256];
  int i = threadIdx.x;
  s[i] = i;
  __syncthreads();
  fn_t f = table[(which + i) & 1];
  out[i] = f(s, i);
}

// lane i recurses n + (i & 3) levels deep
__global__ void recursive_call(int *out, int n) {
  __shared__ int s[256];
  int i = threadIdx.x;
  s[i] = 0;
  __syncthreads();
  out[i] = depth(s, i, n + (i & 3));
}

// each block divides its row of x; with a parameter's assert (never failing) or a printf
// (never reached) besides
__global__ void divide_asserted(const float *x, float *out, int n) {
  __shared__ float s[256];
  int i = threadIdx.x;
  assert(n > 0);
  float q = x[blockIdx.x * 64 + i] / x[blockIdx.x * 64 + (i ^ 1)];
  s[i * 2 % 256] = q;
  __syncthreads();
  out[blockIdx.x * 64 + i] = s[(i + 1) * 2 % 256];
}

__global__ void divide_printed(const float *x, float *out, int n) {
  __shared__ float s[256];
  int i = threadIdx.x;
  if (n < 0) printf("n = %d\n", n);
  float q = x[blockIdx.x * 64 + i] / x[blockIdx.x * 64 + (i ^ 1)];
  s[i * 2 % 256] = q;
  __syncthreads();
  out[blockIdx.x * 64 + i] = s[(i + 1) * 2 % 256];
}
