// shmem's own kernel for issue 29: one Params struct by value, as a library passes it; its
// pointers are the real run's, its row length decides the bank conflicts of the column read.
struct Params {
  const float *in;
  float *out;
  int n, ld, pad;
};

extern "C" __global__ void params_kernel(Params p) {
  __shared__ float s[32 * 34 + 2];
  int tx = threadIdx.x, ty = threadIdx.y;
  s[ty * p.ld + tx] = p.in[ty * p.n + tx];
  __syncthreads();
  p.out[ty * p.n + tx] = s[tx * p.ld + ty + p.pad];
}
