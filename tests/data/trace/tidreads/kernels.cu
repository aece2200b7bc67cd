// threadIdx.x read again, for op_misc (docs/hardware-model.md 9e): ptxas merges repeated
// reads of %tid.x, so a read is repeated only where it hoists one before each of t_loop's two
// loops (the unrolled one and the remainder) and puts t_bar's between its barriers.
__device__ __forceinline__ unsigned tidx() { unsigned t; asm volatile("mov.u32 %0, %%tid.x;" : "=r"(t)); return t; }
extern "C" __global__ void t_once(unsigned *out) { out[blockIdx.x * blockDim.x + tidx()] = 1; }
extern "C" __global__ void t_three(unsigned *out) {
  unsigned a = tidx(); unsigned b = tidx(); unsigned c = tidx();
  out[blockIdx.x * blockDim.x + a] = a ^ b ^ c; }
extern "C" __global__ void t_bar(unsigned *out) {
  unsigned a = tidx(); __syncthreads(); unsigned b = tidx(); __syncthreads();
  out[blockIdx.x * blockDim.x + a] = b; }
extern "C" __global__ void t_loop(unsigned *out, int n) {
  unsigned s = 0; for (int i = 0; i < n; ++i) s += tidx() * (i + 1);
  out[blockIdx.x * blockDim.x + (s % blockDim.x)] = s; }
