// shmem's own lint test kernel: a loop whose invariant shared-memory load nvcc hoists.
// Each 32x8 block scales a 32x32 tile: acc = sum over r of tile[(ty + 8r) % 32][tx] * w[tx].
__global__ void row_scale(float *out, const float *in, const float *weights) {
  __shared__ float tile[32][33];
  __shared__ float w[32];
  int tx = threadIdx.x, ty = threadIdx.y;
  for (int r = 0; r < 4; ++r) tile[ty + 8 * r][tx] = in[(ty + 8 * r) * 32 + tx];
  if (ty == 0) w[tx] = weights[tx];
  __syncthreads();
  float acc = 0.f;
#pragma unroll
  for (int r = 0; r < 4; ++r) acc += tile[(ty + 8 * r) % 32][tx] * w[tx];
  out[ty * 32 + tx] = acc;
}
