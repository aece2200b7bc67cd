// Issue 26 (sm_80): IMNMX and UPOPC, which ptxas emits for sm_80 where sm_90 has VIMNMX and
// regular POPC. The project's own. The test compares with NumPy (sm_80 code does not run on
// an H200). Build: nvcc -cubin -lineinfo -O3 -arch=sm_80 -o ../ops80.sm_80.cubin ops80.cu
extern "C" __global__ void min_max_popc(int *out, const int *in, int a, int b, unsigned u) {
  int t = threadIdx.x;
  int idx = (int)(__popc(u) + min(a, b) + max(a, (int)blockIdx.x)) & 31;
  out[t] = min(in[t], in[t + 32]) + max(in[t], a) * 3 + in[(t + idx) & 63];
}
