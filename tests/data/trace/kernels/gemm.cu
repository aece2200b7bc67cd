// shmem's own trace test kernels: tiled matrix products (the compiler vectorizes As[ty][k]).
#include <cstdint>

// C = A * B, one BS x BS tile per block; A is n x k, B is k x m, row-major.
template <int BS>
__global__ void tiled_matmul(float *C, const float *A, const float *B, int k, int m) {
  __shared__ float As[BS][BS];
  __shared__ float Bs[BS][BS];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * BS + ty, col = blockIdx.x * BS + tx;
  float acc = 0.f;
  for (int t = 0; t < k; t += BS) {
    As[ty][tx] = A[row * k + t + tx];
    Bs[ty][tx] = B[(t + ty) * m + col];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < BS; ++j) acc += As[ty][j] * Bs[j][tx];
    __syncthreads();
  }
  C[row * m + col] = acc;
}
template __global__ void tiled_matmul<16>(float *, const float *, const float *, int, int);
template __global__ void tiled_matmul<32>(float *, const float *, const float *, int, int);

// A register-blocked SGEMM: 256 threads compute a 64x64 tile of C, 4x4 outputs each,
// A tile stored transposed so that both operands are read as float4.
__global__ void __launch_bounds__(256) sgemm_4x4(float *C, const float *A, const float *B,
                                                 int M, int N, int K) {
  __shared__ float4 As[16][16];  // As[k][i/4]: A transposed, 16 x 64 floats
  __shared__ float4 Bs[16][16];  // Bs[k][j/4]
  int tid = threadIdx.x;
  int tr = tid / 16, tc = tid % 16;
  const float *Ab = A + blockIdx.y * 64 * K;
  const float *Bb = B + blockIdx.x * 64;
  float acc[4][4] = {};
  for (int t = 0; t < K; t += 16) {
    // each thread loads 4 floats of A (one column slice) and 4 of B
    int ar = tid / 4, ac = (tid % 4) * 4;
    float a0 = Ab[ar * K + t + ac + 0], a1 = Ab[ar * K + t + ac + 1];
    float a2 = Ab[ar * K + t + ac + 2], a3 = Ab[ar * K + t + ac + 3];
    float *Af = reinterpret_cast<float *>(As);
    Af[(ac + 0) * 64 + ar] = a0;
    Af[(ac + 1) * 64 + ar] = a1;
    Af[(ac + 2) * 64 + ar] = a2;
    Af[(ac + 3) * 64 + ar] = a3;
    int br = tid / 16, bc = (tid % 16) * 4;
    Bs[br][bc / 4] = *reinterpret_cast<const float4 *>(&Bb[(t + br) * N + bc]);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) {
      float4 a = As[kk][tr];
      float4 b = Bs[kk][tc];
      float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      C[(blockIdx.y * 64 + tr * 4 + i) * N + blockIdx.x * 64 + tc * 4 + j] = acc[i][j];
}
