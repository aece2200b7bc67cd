// shmem's own kernels for issue 30: decisions on global data that only choose register
// values (nvcc's slow paths of a float division and of sqrtf, a subroutine called behind a
// branch on the operands), which the proof of alike blocks (shmem_cli/trace/emulator/alike/)
// must let through, and the same values used in a shared address afterwards, which it must
// refuse.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o datapaths.sm_90.cubin datapaths.cu
#define N 128

// accepted: a row's sum by a tree in shared memory (addresses from threadIdx alone), then
// each value divided by it, its square root and its __expf taken: the division's and
// sqrtf's slow paths run in the blocks whose row is denormal, __expf's guarded fix-ups
// (@!P0 FMUL) where the exponent is large, and they write registers only
extern "C" __global__ void dp_norm(float *out, const float *in) {
  __shared__ float part[N];
  float v = in[blockIdx.x * N + threadIdx.x];
  part[threadIdx.x] = v;
  __syncthreads();
  for (int s = N / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  float sum = part[0];
  out[blockIdx.x * N + threadIdx.x] = __expf(sqrtf(v / sum));
}

// refused: the same quotient picks the shared word each thread stores to
extern "C" __global__ void dp_index(float *out, const float *in) {
  __shared__ float tile[N * 4];
  float v = in[blockIdx.x * N + threadIdx.x];
  float q = v / in[blockIdx.x * N];
  tile[threadIdx.x * 4 + ((int)q & 3)] = v;
  __syncthreads();
  out[blockIdx.x * N + threadIdx.x] = tile[threadIdx.x];
}
