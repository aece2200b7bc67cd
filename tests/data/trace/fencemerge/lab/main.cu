// The lab's launches, in the order tests/test_trace_misc_labs.py (FENCEMERGE) lists them.
#include <cstdio>
#include "../kernels.cu"
int main() {
  float *out; cudaMalloc(&out, 1 << 20); cudaMemset(out, 0, 1 << 20);
  int warps[] = {1, 4, 8}, waits[] = {0, 256};
  for (int w : warps) for (int n : waits) f_pair<<<1, 32 * w>>>(out, n);
  for (int w : warps) for (int n : waits) f_sc<<<1, 32 * w>>>(out, n);
  for (int w : warps) for (int n : waits) f_lone<<<1, 32 * w>>>(out, n);
  int iters[] = {1, 8};
  for (int i : iters) w_ss<<<1, 128>>>(out, i);
  for (int i : iters) w_rs<<<1, 128>>>(out, i);
  for (int i : iters) w_attn<<<1, 128>>>(out, i);
  for (int i : iters) w_attn_nobar<<<1, 128>>>(out, i);
  for (int i : iters) w_attn_noshfl<<<1, 128>>>(out, i);
  for (int i : iters) w_attn_cp<<<1, 128>>>(out, i);
  for (int i : iters) w_attn_cp8<<<1, 256>>>(out, i);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
