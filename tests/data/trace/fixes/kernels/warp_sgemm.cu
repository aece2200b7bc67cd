// shmem's own test kernel for `shmem sweep --define` and `shmem trace --suggest` (issue 21):
// a warp-tiled SGEMM. A block of 256 threads (8 warps as 2 x 4) computes a 64 x 128 tile of
// C; each warp a 32 x 32 tile; each thread 4 x 8 outputs. The A tile is stored transposed
// (As[k][m]) by four scalar stores per thread, so that the inner loop reads four
// consecutive m of one k: nvcc merges those reads into one LDS.128 while each row of As
// stays 16-byte aligned. PAD floats pad each row of As.
#ifndef PAD
#define PAD 0
#endif
#define TILE_M 64
#define TILE_N 128
#define TILE_K 16

__global__ void __launch_bounds__(256) warp_sgemm(float *C, const float *A, const float *B,
                                                  int M, int N, int K) {
  __shared__ float As[TILE_K][TILE_M + PAD];
  __shared__ float Bs[TILE_K][TILE_N];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = (warp / 4) * 32, wn = (warp % 4) * 32;  // this warp's corner in the tile
  const int tm = (lane / 4) * 4, tn = (lane % 4) * 8;    // this thread's corner in the warp's
  const float *Ablock = A + blockIdx.y * TILE_M * K;
  const float *Bblock = B + blockIdx.x * TILE_N;
  float acc[4][8] = {};
  for (int k0 = 0; k0 < K; k0 += TILE_K) {
    // A: one float4 of a row per thread, written down a column of As
    const int ar = tid / 4, ak = (tid % 4) * 4;
    const float4 a = *reinterpret_cast<const float4 *>(&Ablock[ar * K + k0 + ak]);
    As[ak + 0][ar] = a.x;
    As[ak + 1][ar] = a.y;
    As[ak + 2][ar] = a.z;
    As[ak + 3][ar] = a.w;
    // B: two float4 of a row per thread, stored as they are
    for (int h = 0; h < 2; ++h) {
      const int f = tid + h * 256, br = f / 32, bn = (f % 32) * 4;
      *reinterpret_cast<float4 *>(&Bs[br][bn]) =
          *reinterpret_cast<const float4 *>(&Bblock[(k0 + br) * N + bn]);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE_K; ++k) {
      float am[4], bn[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) am[i] = As[k][wm + tm + i];
#pragma unroll
      for (int j = 0; j < 8; ++j) bn[j] = Bs[k][wn + tn + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += am[i] * bn[j];
    }
    __syncthreads();
  }
  float *Cblock = C + blockIdx.y * TILE_M * N + blockIdx.x * TILE_N;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) Cblock[(wm + tm + i) * N + wn + tn + j] = acc[i][j];
}
