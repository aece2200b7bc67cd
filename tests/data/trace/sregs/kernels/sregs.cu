// shmem's own kernels for op_misc (docs/hardware-model.md 9e), third round after
// tests/data/trace/warpops and globalops: the transposes and tiled matmuls of the earlier
// labs read 1 op_misc wavefront a warp beyond the rule, and all of them run 2D blocks. Each
// kernel here reads one special register (or none) and every thread stores it to
// out[256 + threadIdx.x] (a store that runs costs nothing; threads of other rows write the
// same words), then the threads with threadIdx.x 0 write out[blockIdx.x]; s_linear reads
// the linear thread index (threadIdx.y and .z, blockDim.x and .y). Launched with 1D and 2D blocks. The loop kernels run a counted loop with
// or without memory inside, as the transposes do.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../sregs.sm_90.cubin sregs.cu
#define LINEAR (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))
#define SREG(name, reg)                                                         \
  extern "C" __global__ void name(unsigned *out, const unsigned *in, int n) {   \
    unsigned v;                                                                 \
    asm volatile("mov.u32 %0, " reg ";" : "=r"(v));                             \
    out[256 + threadIdx.x] = v;                                                 \
    if (threadIdx.x == 0) out[blockIdx.x] = 1;                                  \
  }
extern "C" __global__ void s_none(unsigned *out, const unsigned *in, int n) {
  out[256 + threadIdx.x] = threadIdx.x;
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}
SREG(s_tid_x, "%tid.x")
SREG(s_tid_y, "%tid.y")
SREG(s_tid_z, "%tid.z")
SREG(s_ntid_y, "%ntid.y")
SREG(s_ctaid_y, "%ctaid.y")
SREG(s_laneid, "%laneid")
SREG(s_warpid, "%warpid")
SREG(s_smid, "%smid")
SREG(s_lanemask_lt, "%lanemask_lt")
extern "C" __global__ void s_linear(unsigned *out, const unsigned *in, int n) {
  out[256 + LINEAR] = 5;
  if (LINEAR == 0) out[blockIdx.x] = 1;
}
// counted loops (n iterations): no memory; a global load into shared memory; shared to global
extern "C" __global__ void s_loop(unsigned *out, const unsigned *in, int n) {
  unsigned v = threadIdx.x;
  for (int j = 0; j < n; ++j) v = v * 3 + j;
  out[256 + threadIdx.x] = v;
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}
extern "C" __global__ void s_loop_sts(unsigned *out, const unsigned *in, int n) {
  __shared__ unsigned s[1024];
  for (int j = 0; j < n; ++j) ((volatile unsigned *)s)[(threadIdx.x + 128 * j) % 1024] = in[threadIdx.x + 128 * j];
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}
extern "C" __global__ void s_loop_lds_stg(unsigned *out, const unsigned *in, int n) {
  __shared__ unsigned s[1024];
  for (int j = 0; j < n; ++j) out[256 + threadIdx.x + 128 * j] = ((volatile unsigned *)s)[(threadIdx.x * 33 + j) % 1024];
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}
// a transpose of a 32 x 32 tile with blockDim.y rows a pass, as the earlier labs' tile_transpose
extern "C" __global__ void s_transpose(unsigned *out, const unsigned *in, int n) {
  __shared__ unsigned tile[32][33];
  for (int j = 0; j < 32; j += blockDim.y) tile[threadIdx.y + j][threadIdx.x] = in[(threadIdx.y + j) * 32 + threadIdx.x];
  __syncthreads();
  for (int j = 0; j < 32; j += blockDim.y) out[256 + (threadIdx.y + j) * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y + j];
}
// a CTA barrier, once and n times in a loop
extern "C" __global__ void s_bar(unsigned *out, const unsigned *in, int n) {
  __syncthreads();
  out[256 + threadIdx.x] = threadIdx.x;
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}
extern "C" __global__ void s_loop_bar(unsigned *out, const unsigned *in, int n) {
  for (int j = 0; j < n; ++j) __syncthreads();
  out[256 + threadIdx.x] = threadIdx.x;
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
}
