// A plain sm_90 kernel that reads cuda_fp8.h and asserts: the header tests
// __CUDA_ARCH_FAMILY_SPECIFIC__ (a macro -arch=sm_90a defines) only for sm_100 on, so the
// sm_90a build would compile the same text, and shmem trace builds it once
// (tests/test_trace_sm90a_probe.py).
#include <cassert>
#include <cuda_fp8.h>

__global__ void fp8_rows(const __nv_fp8_e4m3 *in, float *out, int n) {
  __shared__ float s[256];
  assert(n <= 256);
  s[threadIdx.x] = float(in[threadIdx.x]);
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x + 1) % n];
}
