#include <cstdio>
#include "../kernels.cu"
int main() {
  unsigned *out; cudaMalloc(&out, 1 << 20); cudaMemset(out, 0, 1 << 20);
  t_once<<<2, 128>>>(out);
  t_bar<<<2, 128>>>(out);
  int ns[] = {1, 3, 4, 5, 8, 9};
  for (int n : ns) t_loop<<<2, 128>>>(out, n);
  t_loop<<<2, 64>>>(out, 5);
  t_bar<<<1, 32>>>(out);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
