// shmem's own trace test kernels: transposes, vector widths, reductions, scans.
// Written for the shmem test suite and measured on an NVIDIA H200 (see ../measured.json).
#include <cstdint>

#define TILE 32

// Naive transpose through a 32x32 tile: the column read puts all 32 lanes in one bank.
__global__ void tile_transpose(float *out, const float *in, int n) {
  __shared__ float tile[TILE][TILE];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// The same with one float of padding per row.
__global__ void tile_transpose_padded(float *out, const float *in, int n) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x;
  int y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += blockDim.y)
    out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

// Every vector width: each thread writes then reads element (tid * STRIDE) % count.
template <typename T, int STRIDE>
__global__ void strided_rw(T *out, const T *in) {
  constexpr int count = 2048 / sizeof(T) < 64 ? 64 : 2048 / sizeof(T);
  __shared__ T buf[count];
  unsigned tid = threadIdx.x;
  for (unsigned i = tid; i < count; i += blockDim.x) buf[i] = in[i];
  __syncthreads();
  T v = buf[(tid * STRIDE) % count];
  __syncthreads();
  buf[(tid * STRIDE + 1) % count] = v;
  __syncthreads();
  out[tid] = buf[tid % count];
}
template __global__ void strided_rw<unsigned char, 1>(unsigned char *, const unsigned char *);
template __global__ void strided_rw<unsigned short, 3>(unsigned short *, const unsigned short *);
template __global__ void strided_rw<float, 2>(float *, const float *);
template __global__ void strided_rw<float, 33>(float *, const float *);
template __global__ void strided_rw<double, 1>(double *, const double *);
template __global__ void strided_rw<float2, 2>(float2 *, const float2 *);
template __global__ void strided_rw<float4, 1>(float4 *, const float4 *);
template __global__ void strided_rw<float4, 8>(float4 *, const float4 *);

// Pairs of lanes read the same 8- and 16-byte element (the pair-merge rule).
__global__ void pair_reads(double *out, const double *in) {
  __shared__ double d[256];
  __shared__ float4 q[128];
  unsigned tid = threadIdx.x;
  d[tid] = in[tid];
  q[tid % 128] = make_float4(in[tid], 1.f, 2.f, 3.f);
  __syncthreads();
  double a = d[tid / 2];
  float4 b = q[(tid / 2) % 128];
  double c = d[(tid ^ 1) * 4 % 256];
  out[tid] = a + b.x + b.w + c;
}

// A tree reduction in shared memory with interleaved addressing (divergent, conflicting),
// then a warp reduction with shuffles.
__global__ void tree_reduce(float *out, const float *in, int n) {
  extern __shared__ float sdata[];
  unsigned tid = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + tid;
  sdata[tid] = i < n ? in[i] : 0.f;
  __syncthreads();
  for (unsigned s = 1; s < blockDim.x / 32; s *= 2) {
    unsigned index = 2 * s * tid;
    if (index < blockDim.x) sdata[index] += sdata[index + s];
    __syncthreads();
  }
  if (tid < 32) {
    float v = sdata[tid * (blockDim.x / 32)];
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    if (tid == 0) out[blockIdx.x] = v;
  }
}

// Hillis-Steele inclusive scan with a double buffer; runtime-length loop.
__global__ void scan_double_buffer(int *out, const int *in, int n) {
  __shared__ int buf[2][512];
  int tid = threadIdx.x;
  int pout = 0, pin = 1;
  buf[pout][tid] = tid < n ? in[tid] : 0;
  __syncthreads();
  for (int offset = 1; offset < n; offset *= 2) {
    pout = 1 - pout;
    pin = 1 - pout;
    if (tid >= offset)
      buf[pout][tid] = buf[pin][tid] + buf[pin][tid - offset];
    else
      buf[pout][tid] = buf[pin][tid];
    __syncthreads();
  }
  if (tid < n) out[tid] = buf[pout][tid];
}
