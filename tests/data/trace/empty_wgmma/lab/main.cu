#include <cstdio>
#include "../empty_wgmma.cu"
int main() {
  float* o; cudaMalloc(&o, 4096);
  int ns[3] = {0, 1, 3};
  for (int i = 0; i < 3; ++i) { empty_wgmma<<<1, 128>>>(o, ns[i]); }
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return 0;
}
