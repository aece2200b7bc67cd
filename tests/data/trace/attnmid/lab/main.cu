// The lab's launches, in the order tests/test_trace_misc_labs.py (ATTNMID) lists them.
#include <cstdio>
#include "../kernels.cu"
int main() {
  float *out; cudaMalloc(&out, 1 << 20); cudaMemset(out, 0, 1 << 20);
  int iters[] = {1, 8};
  for (int i : iters) o_mid<<<1, 128>>>(out, i);
  for (int i : iters) o_mid_quiet<<<1, 128>>>(out, i);
  for (int i : iters) o_mid_cp<<<1, 128>>>(out, i);
  for (int i : iters) o_mid_cp8<<<1, 256>>>(out, i);
  for (int i : iters) o_mid8<<<1, 256>>>(out, i);
  for (int i : iters) o_mid_quiet8<<<1, 256>>>(out, i);
  for (int i : iters) m_mid1<<<1, 128>>>(out, i);
  for (int i : iters) m_mid3<<<1, 128>>>(out, i);
  for (int i : iters) m_sts<<<1, 128>>>(out, i);
  for (int i : iters) m_cp_kept<<<1, 128>>>(out, i);
  for (int i : iters) m_cp_spin<<<1, 128>>>(out, i);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
