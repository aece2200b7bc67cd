// Kernels for the `shmem trace` figures of `make bench` (bench/run.py). Rebuild the kept
// cubin with: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o trace_bench.sm_90.cubin trace_bench.cu

// SGEMM in the register-blocked style: 256 threads compute a 64x64 tile of C, 4x4 outputs
// each; K is walked in slices of 8, A's slice kept transposed in shared memory.
// Launch: --block 256 --arg M=64 --arg N=64 --arg K=512
__global__ void sgemm_tile(float *C, const float *A, const float *B, int M, int N, int K) {
  __shared__ float As[8][64];
  __shared__ float Bs[8][64];
  int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += 8) {
    for (int i = threadIdx.x; i < 8 * 64; i += blockDim.x) {
      int r = i / 64, c = i % 64;
      As[r][c] = A[(blockIdx.y * 64 + c) * K + k0 + r];
      Bs[r][c] = B[(k0 + r) * N + blockIdx.x * 64 + c];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        a[i] = As[k][ty * 4 + i];
        b[i] = Bs[k][tx * 4 + i];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      C[(blockIdx.y * 64 + ty * 4 + i) * N + blockIdx.x * 64 + tx * 4 + j] = acc[i][j];
}

// A long loop of integer arithmetic and scattered shared-memory reads, to measure the
// emulator's speed in thread-instructions per second. Launch: --block 256 --arg iters=N
__global__ void busy_loop(float *out, int iters) {
  __shared__ float s[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = static_cast<float>(i);
  __syncthreads();
  float acc = 0.0f;
  unsigned idx = threadIdx.x;
  for (int i = 0; i < iters; ++i) {
    idx = (idx * 5u + 1u) & 1023u;
    acc += s[idx];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
