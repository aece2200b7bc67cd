// shmem's own probes for the pair rule's corner (issue 30; nothing here is upstream code).
// One LDS.64 (pr_ld64) or LDS.128 (pr_ld128) outside any loop: lane l reads bins[idx[l]]
// where idx[l] >= 0 (idx: 32 ints from the launch's input file), the others stay off.
extern "C" __global__ void pr_ld64(unsigned long long *out, const int *idx) {
  __shared__ double bins[256];
  int t = threadIdx.x;
  for (int i = t; i < 256; i += blockDim.x) bins[i] = (double)i;
  __syncthreads();
  int k = idx[t];
  double v = -1.;
  if (k >= 0) v = bins[k];
  out[t] = __double_as_longlong(v);
}

extern "C" __global__ void pr_ld128(float4 *out, const int *idx) {
  __shared__ float4 bins[128];
  int t = threadIdx.x;
  for (int i = t; i < 128; i += blockDim.x) bins[i] = make_float4(i, i, i, i);
  __syncthreads();
  int k = idx[t];
  float4 v = make_float4(-1.f, -1.f, -1.f, -1.f);
  if (k >= 0) v = bins[k];
  out[t] = v;
}
