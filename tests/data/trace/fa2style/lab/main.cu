// Runs ../kernels/fa2_style.cu's fa2_forward on a GPU as tests/test_trace_fa2style.py traces
// it: batch 1, 2 heads, 256 keys, head dim 64, causal or not (argv[2]), every input zero, the
// parameter block written to argv[1] (its pointers are the run's: the trace reads memory it
// was not given as zeros, as these are).
#include "../kernels/fa2_style.cu"
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
int main(int argc, char **argv) {
  int seqlen = 256, heads = 2, batch = 1, causal = argc > 2 ? atoi(argv[2]) : 1;
  size_t n = size_t(batch) * heads * seqlen * D;
  half *q, *k, *v, *o;
  cudaMalloc(&q, n * 2); cudaMalloc(&k, n * 2); cudaMalloc(&v, n * 2); cudaMalloc(&o, n * 2);
  cudaMemset(q, 0, n * 2); cudaMemset(k, 0, n * 2); cudaMemset(v, 0, n * 2); cudaMemset(o, 0, n * 2);
  FwdParams p{q, k, v, o, seqlen, heads, (long long)seqlen * D, 0.125f * 1.4426950408889634f, causal};
  if (FILE *f = std::fopen(argv[1], "wb")) { std::fwrite(&p, sizeof p, 1, f); std::fclose(f); }
  dim3 grid(seqlen / BR, batch, heads);
  fa2_forward<<<grid, 128>>>(p);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("grid %d,%d,%d causal %d: %s\n", grid.x, grid.y, grid.z, causal, cudaGetErrorString(e));
  return e != cudaSuccess;
}
