// shmem trace emulator tests: small kernels whose outputs are checked against NumPy.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../emu_basic_sm90.cubin emu_basic.cu
#include <cstdint>

// out[x][y] = in[y][x] for a 32x32 tile; PAD = 0 reads a column of one bank
template <int PAD>
__global__ void emu_transpose(const float *in, float *out) {
  __shared__ float tile[32][32 + PAD];
  int x = threadIdx.x, y = threadIdx.y;
  for (int j = 0; j < 32; j += blockDim.y) tile[y + j][x] = in[(y + j) * 32 + x];
  __syncthreads();
  for (int j = 0; j < 32; j += blockDim.y) out[(y + j) * 32 + x] = tile[x][y + j];
}
template __global__ void emu_transpose<0>(const float *, float *);
template __global__ void emu_transpose<1>(const float *, float *);

// block sum: shared tree down to 64, then warp shuffles; out[blockIdx.x] = sum
__global__ void emu_reduce(const float *in, float *out, int n) {
  extern __shared__ float s[];
  unsigned t = threadIdx.x;
  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x) v += in[i];
  s[t] = v;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k >= 32; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t < 32) {
    v = s[t];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (t == 0) out[blockIdx.x] = v;
  }
}

// 64-bin histogram of bytes with shared atomics; data-dependent addresses
__global__ void emu_histogram(const uint8_t *data, int n, unsigned *bins) {
  __shared__ unsigned h[64];
  for (int i = threadIdx.x; i < 64; i += blockDim.x) h[i] = 0;
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) atomicAdd(&h[data[i] & 63], 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < 64; i += blockDim.x) atomicAdd(&bins[i], h[i]);
}

// inclusive prefix sum of one block (Hillis-Steele, double buffered)
__global__ void emu_scan(const int *in, int *out) {
  __shared__ int buf[2][256];
  int t = threadIdx.x, p = 0;
  buf[0][t] = in[t];
  __syncthreads();
  for (int d = 1; d < blockDim.x; d <<= 1) {
    int v = buf[p][t];
    if (t >= d) v += buf[p][t - d];
    buf[1 - p][t] = v;
    p = 1 - p;
    __syncthreads();
  }
  out[t] = buf[p][t];
}

// divergence, runtime trip counts, integer division, float math, vector widths
struct Pair { int a; float b; };
__global__ void emu_mixed(const int *idx, const float4 *vin, float *out, long long *wide,
                          Pair pr, int trips) {
  __shared__ float4 v4[64];
  __shared__ double d2[64];
  __shared__ short s16[128];
  __shared__ char c8[256];
  int t = threadIdx.x;
  v4[t] = vin[t];
  d2[t] = (double)t * 0.5;
  s16[2 * t] = (short)(t - 40);
  s16[2 * t + 1] = (short)(3 * t);
  c8[4 * t] = (char)(t * 7);
  __syncthreads();
  float acc = 0.f;
  if (t % 3 == 0) {
    for (int k = 0; k < trips + t % 5; ++k) acc += v4[(t + k) % 64].y;
  } else if (t % 3 == 1) {
    acc = sqrtf((float)t) + (float)(t * pr.a) / 7.0f;
  } else {
    acc = (float)d2[idx[t] % 64] + s16[(t * 5) % 128] - (float)c8[(t * 8) % 256];
  }
  int q = t / (pr.a + 1), r = t % (pr.a + 1);
  out[t] = acc + pr.b;
  out[64 + t] = (float)(q * 1000 + r);
  long long w = (long long)t * 0x100000001LL - (long long)idx[t] * 3;
  wide[t] = w >> 3;
}
