// shmem's own kernels for issue 20: whole grids. ev_transpose is the classic tiled transpose
// (32x32 float tile, 32x8 threads, rows guarded by the matrix size); ev_blockdep reads its tile
// with a column stride chosen by blockIdx.x % 4, so its blocks differ.
#define TILE 32
extern "C" __global__ void ev_transpose(float *out, const float *in, int width, int height) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8)
    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8)
    if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

extern "C" __global__ void ev_blockdep(float *out, const float *in) {
  __shared__ float tile[32 * 33];
  int t = threadIdx.x, b = blockIdx.x + gridDim.x * blockIdx.y;
  tile[t] = in[b * 1024 + t];
  __syncthreads();
  int s = 1 + (blockIdx.x % 4);  // 1, 2, 3 or 4: 1-, 2-, 1- and 4-way
  float v = tile[(t * s) % 1024];
  if (blockIdx.y == 1) v += tile[(t * 32) % 1024];  // only the second row of blocks
  out[b * 1024 + t] = v;
}
