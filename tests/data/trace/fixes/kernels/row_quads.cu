// shmem's own test kernel for `shmem trace --suggest` (issue 21): padding that breaks a
// vector access. A 32 x 8 block fills a 32 x 128 float tile down its columns (lane = row:
// scalar stores, 32-way conflicted without padding) and reads it back by rows, four
// neighbouring floats per lane, which nvcc merges into one LDS.128 while every row starts
// 16-byte aligned. The row loop is kept rolled, so the one SASS load serves rows at every
// offset: an odd PAD splits it into four scalar loads, PAD 2 into two LDS.64.
template <int PAD>
__global__ void row_quads(float *out, const float *in) {
  __shared__ float tile[32][128 + PAD];
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int j = 0; j < 16; ++j) tile[tx][ty + 8 * j] = in[(ty + 8 * j) * 32 + tx];
  __syncthreads();
  float sum = 0.f;
#pragma unroll 1
  for (int i = 0; i < 4; ++i) {
    const int r = ty + 8 * i;
    float v[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) v[q] = tile[r][4 * tx + q];
    sum += (v[0] + v[1]) + (v[2] + v[3]);
  }
  out[ty * 32 + tx] = sum;
}
template __global__ void row_quads<0>(float *, const float *);
template __global__ void row_quads<1>(float *, const float *);
template __global__ void row_quads<2>(float *, const float *);
template __global__ void row_quads<4>(float *, const float *);
template __global__ void row_quads<8>(float *, const float *);
