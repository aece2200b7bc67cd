// shmem's own probes of Nsight Compute's ideal wavefronts for partial warps (issues 29/30;
// nothing here is upstream code). One shared access outside any loop: lane l touches
// element idx[l] where idx[l] >= 0 (idx: 32 ints from the launch's input file).
extern "C" __global__ void ip_st64(unsigned long long *out, const int *idx) {
  __shared__ double bins[256];
  int t = threadIdx.x;
  for (int i = t; i < 256; i += blockDim.x) bins[i] = 0.;
  __syncthreads();
  int k = idx[t];
  if (k >= 0) bins[k] = (double)t;
  __syncthreads();
  for (int i = t; i < 256; i += blockDim.x) out[i] = __double_as_longlong(bins[i]);
}
extern "C" __global__ void ip_st128(float4 *out, const int *idx) {
  __shared__ float4 bins[128];
  int t = threadIdx.x;
  for (int i = t; i < 128; i += blockDim.x) bins[i] = make_float4(0.f, 0.f, 0.f, 0.f);
  __syncthreads();
  int k = idx[t];
  if (k >= 0) bins[k] = make_float4(t, t, t, t);
  __syncthreads();
  for (int i = t; i < 128; i += blockDim.x) out[i] = bins[i];
}
extern "C" __global__ void ip_ld128(float4 *out, const int *idx) {
  __shared__ float4 bins[128];
  int t = threadIdx.x;
  for (int i = t; i < 128; i += blockDim.x) bins[i] = make_float4(i, i, i, i);
  __syncthreads();
  int k = idx[t];
  float4 v = make_float4(-1.f, -1.f, -1.f, -1.f);
  if (k >= 0) v = bins[k];
  out[t] = v;
}
extern "C" __global__ void ip_st32(unsigned *out, const int *idx) {
  __shared__ unsigned bins[512];
  int t = threadIdx.x;
  for (int i = t; i < 512; i += blockDim.x) bins[i] = 0u;
  __syncthreads();
  int k = idx[t];
  if (k >= 0) bins[k] = t;
  __syncthreads();
  for (int i = t; i < 512; i += blockDim.x) out[i] = bins[i];
}
