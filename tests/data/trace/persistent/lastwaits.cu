// Silent batches (sync/waiting_blocks.py): every block but the last is one class (counted, not
// run); the last waits on a flag the block before it sets, so the blocks before it run for
// what they write only. Per turn of the loop a warp stores 16 rows of 32 floats and loads 16
// (1 wavefront each: 33 floats a row of 8).
extern "C" __global__ void lastwaits(float *out, volatile int *flags, int iters) {
  __shared__ float s[16][8][33];
  int b = blockIdx.x, t = threadIdx.x + 32 * threadIdx.y;
  float acc = 0;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 16; ++k) s[k][threadIdx.y][threadIdx.x] = i + k + threadIdx.x;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) acc += s[15 - k][7 - threadIdx.y][threadIdx.x];
    __syncthreads();
  }
  out[b * 256 + t] = acc;
  if (b == gridDim.x - 1 && t == 0)
    while (flags[b - 1] == 0) {
    }
  __syncthreads();
  if (b < gridDim.x - 1 && t == 0) {
    __threadfence();
    flags[b] = 1;
  }
}
