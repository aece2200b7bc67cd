// A persistent kernel (issue 30): a few blocks loop, each taking 32 x 32 tiles from one
// global counter until none is left, and copy each tile through shared memory, reading it
// back by columns with no padding: every column read is 32-way conflicted. Per tile (a
// 32 x 8 block: 8 warps): 32 row stores of 1 wavefront, 32 column loads of 32 wavefronts.
// Per turn of the loop (every tile taken, and each block's last, empty-handed turn): thread 0
// stores the tile's number (1 request), and every warp loads it back (8 broadcasts).
#define T 32
extern "C" __global__ void persistent_tiles(float *out, const float *in, unsigned *counter,
                                            unsigned ntiles) {
  __shared__ float tile[T][T];
  __shared__ unsigned next;
  for (;;) {
    if (threadIdx.x == 0 && threadIdx.y == 0) next = atomicAdd(counter, 1u);
    __syncthreads();
    unsigned id = next;
    if (id >= ntiles) break;
    const float *src = in + id * T * T;
    for (int j = 0; j < T; j += 8) tile[threadIdx.y + j][threadIdx.x] = src[(threadIdx.y + j) * T + threadIdx.x];
    __syncthreads();
    float *dst = out + id * T * T;
    for (int j = 0; j < T; j += 8) dst[(threadIdx.y + j) * T + threadIdx.x] = tile[threadIdx.x][threadIdx.y + j];
    __syncthreads();
  }
}
