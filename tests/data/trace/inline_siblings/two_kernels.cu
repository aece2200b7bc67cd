// Two kernels, each calling the library copy (include/tiles/copy.h) once, at its own line:
// the line table's sequences are told apart only by their relocations
// (tests/test_inline_siblings.py).
// Built: nvcc -arch=sm_90 -lineinfo -cubin -Iinclude two_kernels.cu -o two_kernels.sm_90.cubin
#include <tiles/copy.h>

__global__ void first(uint32_t *out) {
  __shared__ uint16_t a[2048];
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) a[i] = i;
  __syncthreads();
  uint32_t r[8];
  tiles::copy<tiles::Ldsm4>(a + (threadIdx.x % 16) * 8, r, 2);
  out[threadIdx.x] = r[0] + r[7];
}

__global__ void second(uint32_t *out) {
  __shared__ uint16_t b[2048];
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) b[i] = 3 * i;
  __syncthreads();
  uint32_t r[8];
  tiles::copy<tiles::Ldsm4>(b + (threadIdx.x % 16) * 8 + 256, r, 2);
  out[threadIdx.x] = r[1] + r[6];
}
