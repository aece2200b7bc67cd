// shmem's own kernel for issue 30 (the bench): blocks that differ by blockIdx.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o differ.sm_90.cubin differ.cu
// blocks that differ: block b loops b % 32 + 1 times over its shared tile
extern "C" __global__ void differ(float *out, const float *in, int n) {
  __shared__ float tile[256 + 8];
  int t = threadIdx.x, b = blockIdx.x;
  tile[t] = in[(b * 256 + t) % n];
  __syncthreads();
  float acc = 0.f;
  int trips = b % 32 + 1;
  for (int i = 0; i < trips; ++i) {
    acc += tile[(t * 3 + i) & 255] * 0.5f + tile[(t + i * 8) & 255];
    acc = acc * 0.999f + (float)(i ^ t);
  }
  out[b * 256 + t] = acc;
}
