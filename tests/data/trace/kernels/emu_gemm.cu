// shmem trace emulator benchmark and test: a register-blocked SGEMM tile (64x64 of C per
// block, 256 threads, 4x4 outputs each, K in steps of 8 through shared memory).
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../emu_gemm_sm90.cubin emu_gemm.cu
__global__ void emu_sgemm(int M, int N, int K, const float *A, const float *B, float *C) {
  __shared__ float As[8][64];
  __shared__ float Bs[8][64];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  int row0 = blockIdx.y * 64, col0 = blockIdx.x * 64;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 8) {
    int i = threadIdx.x;  // 256 threads load 8x64 of A^T and 8x64 of B: 2 floats each
    for (int r = 0; r < 2; ++r, i += 256) {
      int kk = i / 64, mm = i % 64;
      As[kk][mm] = A[(row0 + mm) * K + k0 + kk];
      Bs[kk][mm] = B[(k0 + kk) * N + col0 + mm];
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < 8; ++kk) {
      float4 a = *reinterpret_cast<const float4 *>(&As[kk][ty * 4]);
      float4 b = *reinterpret_cast<const float4 *>(&Bs[kk][tx * 4]);
      float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int p = 0; p < 4; ++p)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[p][q] += av[p] * bv[q];
    }
    __syncthreads();
  }
  for (int p = 0; p < 4; ++p)
    for (int q = 0; q < 4; ++q) C[(row0 + ty * 4 + p) * N + col0 + tx * 4 + q] = acc[p][q];
}
