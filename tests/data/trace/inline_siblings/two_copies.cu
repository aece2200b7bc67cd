// Two calls of one library copy (include/tiles/copy.h): the line table's chains of the
// second call's ldmatrix name the first call's line (tests/test_inline_siblings.py).
// Built: nvcc -arch=sm_90 -lineinfo -cubin -Iinclude two_copies.cu -o two_copies.sm_90.cubin
#include <tiles/copy.h>

__global__ void two_copies(uint32_t *out) {
  __shared__ uint16_t a[2048];
  __shared__ uint16_t b[2048];
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) {
    a[i] = i;
    b[i] = 3 * i;
  }
  __syncthreads();
  uint32_t ra[8], rb[8];
  int t = threadIdx.x;
  tiles::copy<tiles::Ldsm4>(a + (t % 16) * 8, ra, 2);
  tiles::copy<tiles::Ldsm4>(b + (t % 16) * 8 + 256, rb, 2);
  uint32_t acc = 0;
  for (int i = 0; i < 8; ++i) acc += ra[i] * 7 + rb[i];
  out[t] = acc;
}
