// The project's own host program for tests/test_trace_exe_lines.py: a kernel that stores
// through a header library (include/strided/store.h) and reads shared memory itself, and a
// main that launches it. Built by build.sh (README.md); never run for a measurement.
#include <cstdio>
#include <strided/store.h>

__global__ void lines(float *out) {
  __shared__ float smem[64];
  int lane = threadIdx.x;
  strided::store<2>(smem, lane, 1.0f * lane);  // 2-way: the library's store
  __syncthreads();
  out[lane] = smem[lane];  // conflict-free: the user's own load
}

int main() {
  float *out = nullptr;
  cudaMalloc(&out, 32 * sizeof(float));
  lines<<<1, 32>>>(out);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
