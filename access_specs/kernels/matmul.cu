// tiled matrix product C = A x B (shmem's own example kernel for shmem trace)
// A is hA x wA, B is wA x wB, C is hA x wB, all row-major floats. A TILE x TILE block computes
// one tile of C, one output per thread, from TILE x TILE tiles of A and B in shared memory. In
// the unrolled inner loop nvcc reads four As[ty][k] at once (LDS.128; with TILE 32, one address
// for every lane of a warp); Bs[k][tx] is a row of 32 floats per warp.
//   shmem trace access_specs/kernels/matmul.cu -k 'matmul<32>' -b 32,32 -a wA=64 -a wB=32
template <int TILE>
__global__ void matmul(float *C, const float *A, const float *B, int wA, int wB) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < wA; t += TILE) {
    As[ty][tx] = A[row * wA + t + tx];
    Bs[ty][tx] = B[(t + ty) * wB + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * wB + col] = sum;
}

template __global__ void matmul<16>(float *, const float *, const float *, int, int);
template __global__ void matmul<32>(float *, const float *, const float *, int, int);
