// The path a build without the architecture-specific target takes, as CuTe writes it
// (CUTE_INVALID_CONTROL_PATH: assert(0 && "...") where an sm_90a build runs wgmma): the
// sm_90 build asserts, and the trace's error says which target the code needs.
#include <cassert>

extern "C" __global__ void needs_sm90a(float *out) {
  __shared__ float s[64];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  out[threadIdx.x] = s[63 - threadIdx.x];
#else
  assert(0 && "Attempting to use this path without TILE_ARCH_SM90A_ENABLED");
#endif
}
