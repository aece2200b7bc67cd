// Launches the kept cubin (../cpguard.sm_90.cubin, the very SASS shmem traces) with
// tiles = 0, 1, 2 and 4, one block of 128 threads each, and checks what each wrote.
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

int main(int argc, char **argv) {
  const char *cubin = argc > 1 ? argv[1] : "../cpguard.sm_90.cubin";
  cudaFree(0);  // the runtime's primary context, current for the driver calls
  CUmodule mod;
  CUfunction fn;
  if (cuModuleLoad(&mod, cubin) != CUDA_SUCCESS || cuModuleGetFunction(&fn, mod, "cp_guard") != CUDA_SUCCESS) {
    printf("cannot load %s\n", cubin);
    return 1;
  }
  const int words = 5 * 128 * 4;  // tiles 0..4 of 128 uint4
  unsigned host[words];
  for (int i = 0; i < words; ++i) host[i] = i;
  unsigned *in, *out;
  cudaMalloc(&in, sizeof host);
  cudaMalloc(&out, 128 * sizeof(unsigned));
  cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
  int ns[4] = {0, 1, 2, 4};
  int bad = 0;
  for (int k = 0; k < 4; ++k) {
    int tiles = ns[k];
    void *args[] = {&out, &in, &tiles};
    cuLaunchKernel(fn, 1, 1, 1, 128, 1, 1, 0, 0, args, 0);
    unsigned got[128];
    cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost);
    for (unsigned t = 0; t < 128; ++t) {
      unsigned want = 0;  // tile i's word .x of thread t: element (i * 128 + t) * 4
      for (int i = 0; i < tiles; ++i) want += (i * 128 + t) * 4;
      bad += got[t] != want;
    }
  }
  printf("%s (%d wrong words)\n", cudaGetErrorString(cudaDeviceSynchronize()), bad);
  return bad != 0;
}
