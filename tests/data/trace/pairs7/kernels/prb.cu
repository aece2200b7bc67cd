// shmem's own probes for the pair rule (issue 30; nothing here is upstream code): pairs5's
// reads again, the LDS.64 / LDS.128 issued without a predicate. prb_br*: lane l reads
// bins[idx[l]] where idx[l] >= 0 inside a branch that nvcc keeps (the lanes with idx[l] < 0
// are not active at the load, as in the hardware-truth lab's kernels); prb_all*: every lane reads
// bins[idx[l]] (every idx[l] >= 0), no branch and no predicate.
extern "C" __global__ void prb_br64(double *out, const int *idx) {
  __shared__ double bins[256];
  int t = threadIdx.x;
  for (int i = t; i < 256; i += blockDim.x) bins[i] = (double)i;
  __syncthreads();
  int k = idx[t];
  double acc = 0.;
  if (k >= 0) { acc = bins[k]; acc = acc * acc + out[t + 32]; out[t + 32] = acc; }
  __syncthreads();
  out[t] = acc;
}

extern "C" __global__ void prb_all64(double *out, const int *idx) {
  __shared__ double bins[256];
  int t = threadIdx.x;
  for (int i = t; i < 256; i += blockDim.x) bins[i] = (double)i;
  __syncthreads();
  out[t] = bins[idx[t] & 255];
}

extern "C" __global__ void prb_br128(float4 *out, const int *idx) {
  __shared__ float4 bins[128];
  int t = threadIdx.x;
  for (int i = t; i < 128; i += blockDim.x) bins[i] = make_float4(i, i, i, i);
  __syncthreads();
  int k = idx[t];
  float acc = 0.f;
#pragma unroll 1
  for (int i = 0; i < 1; ++i) {
    if (k >= 0) { float4 v = bins[k]; acc += v.x + v.y + v.z + v.w; }
  }
  __syncthreads();
  out[t] = make_float4(acc, acc, acc, acc);
}

extern "C" __global__ void prb_all128(float4 *out, const int *idx) {
  __shared__ float4 bins[128];
  int t = threadIdx.x;
  for (int i = t; i < 128; i += blockDim.x) bins[i] = make_float4(i, i, i, i);
  __syncthreads();
  out[t] = bins[idx[t] & 127];
}
