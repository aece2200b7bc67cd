// A templated kernel of the project's own in a namespace, for shmem trace --compare against
// Nsight Compute's names as it writes them (casts in template arguments, parameter lists).
#include <cstdio>
namespace lab {
template <int TILE, int PAD, typename T>
__global__ void transpose_tile(T *out, const T *in, int n) {
  __shared__ T tile[TILE][TILE + PAD];
  int x = threadIdx.x, y = threadIdx.y;
  for (int r = y; r < TILE; r += blockDim.y) tile[r][x] = in[r * n + x];
  __syncthreads();
  for (int r = y; r < TILE; r += blockDim.y) out[r * n + x] = tile[x][r];
}
}  // namespace lab
int main() {
  float *a, *b;
  cudaMalloc(&a, 32 * 32 * 4); cudaMalloc(&b, 32 * 32 * 4);
  cudaMemset(a, 0, 32 * 32 * 4);
  lab::transpose_tile<32, 0, float><<<1, dim3(32, 8)>>>(b, a, 32);
  lab::transpose_tile<32, 1, float><<<1, dim3(32, 8)>>>(b, a, 32);
  cudaError_t e = cudaDeviceSynchronize();
  printf("templ %s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
