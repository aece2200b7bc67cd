// 32x32 tile transpose, unpadded and padded (shmem's own example kernels for shmem trace)
// The kernels of ../transpose_naive.yaml and ../transpose_padded.yaml: a 32x8 block moves one
// 32x32 tile of an n x n float matrix, each thread 4 rows (j). Writing the tile by rows is
// conflict-free; reading it by columns puts a warp's 32 lanes into one bank unless each row is
// padded by one float.
//   shmem trace access_specs/kernels/transpose.cu -k transpose_naive --block 32,8 --arg n=32
constexpr int TILE = 32, ROWS = 8;

template <int PAD>
__device__ void transpose_tile(float *out, const float *in, int n) {
  __shared__ float tile[TILE][TILE + PAD];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;  // the transposed tile's place
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void transpose_naive(float *out, const float *in, int n) {
  transpose_tile<0>(out, in, n);
}

__global__ void transpose_padded(float *out, const float *in, int n) {
  transpose_tile<1>(out, in, n);
}
