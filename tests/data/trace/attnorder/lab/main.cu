// The lab's launches, in the order tests/test_trace_misc_labs.py (ATTNORDER) lists them.
#include <cstdio>
#include "../kernels.cu"
int main() {
  float *out; cudaMalloc(&out, 1 << 20); cudaMemset(out, 0, 1 << 20);
  int iters[] = {1, 8};
  for (int i : iters) o_none<<<1, 128>>>(out, i);
  for (int i : iters) o_before<<<1, 128>>>(out, i);
  for (int i : iters) o_mid<<<1, 128>>>(out, i);
  for (int i : iters) o_after<<<1, 128>>>(out, i);
  for (int i : iters) o_mid_nobar<<<1, 128>>>(out, i);
  for (int i : iters) o_mid_quiet<<<1, 128>>>(out, i);
  for (int i : iters) o_before_w1<<<1, 128>>>(out, i);
  for (int i : iters) o_mid_cp<<<1, 128>>>(out, i);
  for (int i : iters) o_mid_cp8<<<1, 256>>>(out, i);
  for (int i : iters) o_before_cp8<<<1, 256>>>(out, i);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
