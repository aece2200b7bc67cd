// shmem's own kernel for issue 29: shared-memory addresses through __constant__ tables, one
// initialised in the binary (`perm`, read with a register index), one set by the host with
// cudaMemcpyToSymbol (`strides`, read at constant offsets in an unrolled loop).
__constant__ int perm[32] = {0,  4,  8,  12, 16, 20, 24, 28, 1,  5,  9,  13, 17, 21, 25, 29,
                             2,  6,  10, 14, 18, 22, 26, 30, 3,  7,  11, 15, 19, 23, 27, 31};
__constant__ int strides[4];

extern "C" __global__ void const_table(float *out) {
  __shared__ float tile[32 * 33 * 4];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  tile[perm[lane] * 4 + warp] = float(lane);  // the binary's table: 4 lanes per bank
  __syncthreads();
  float acc = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) acc += tile[(lane * strides[i] + warp) % (32 * 33 * 4)];
  out[threadIdx.x] = acc;
}
