// A recursive device function: ptxas saves the convergence barrier it reuses across each
// call (BMOV), which the trace emulator does not run: shmem trace must stop with an error
// naming the instruction and its line. Launch: --block 32
__device__ int walk(const int *tile, int i, int n) {
  if (n <= 0) return tile[i & 31];
  int v = tile[i & 31];
  if (v & 1) v += walk(tile, i + v, n - 1);
  return v;
}

__global__ void recursive_walk(int *out, const int *in) {
  __shared__ int tile[32];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = walk(tile, threadIdx.x, in[32]);
}
