// shmem's own kernel for issue 20: shared-memory addresses computed from __constant__ data.
// `stride` and `taps` are initialized in the binary (.nv.constant3); `offs` is set by the host
// (cudaMemcpyToSymbol / cuModuleGetGlobal + cuMemcpyHtoD), or left unset (zero).
__constant__ int stride = 3;
__constant__ float taps[8] = {0.5f, 0.25f, 0.125f, 1.f, 2.f, 4.f, 8.f, 16.f};
__constant__ int offs[8];

extern "C" __global__ void ev_const(float *out, const float *in) {
  __shared__ float tile[1024];
  int t = threadIdx.x;
  for (int i = t; i < 1024; i += blockDim.x) tile[i] = in[i];
  __syncthreads();
  float acc = tile[(t * stride) % 1024];  // stride from the binary's constant data
  for (int k = 0; k < 8; ++k) acc += taps[k] * tile[(t * offs[k]) % 1024];  // host-set offs
  out[t] = acc;
}
