// shmem's own trace test kernels: data-dependent addresses, atomics, divergence, warp votes.
#include <cstdint>

// A 256-bin histogram in shared memory; the bins come from the input words (data-dependent).
// Each byte of a word is counted with atomicAdd(p, 1), and the word's sum with atomicAdd(p, v).
__global__ void byte_histogram(unsigned *hist_out, const unsigned *data, int count) {
  __shared__ unsigned hist[256];
  __shared__ unsigned sums[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) { hist[i] = 0; sums[i] = 0; }
  __syncthreads();
  for (int p = threadIdx.x; p < count; p += blockDim.x) {
    unsigned w = data[p];
    atomicAdd(&hist[w & 0xFF], 1u);
    atomicAdd(&hist[(w >> 8) & 0xFF], 1u);
    atomicAdd(&sums[(w >> 16) & 0xFF], w >> 24);
    atomicMax(&sums[(w >> 24) & 0xFF], w & 0xFF);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x) hist_out[i] = hist[i] + sums[i];
}

// Gather through an index table read from global memory, and exchange into shared slots.
__global__ void gather_exchange(int *out, const int *idx, const int *vals) {
  __shared__ int table[1024];
  __shared__ int slots[64];
  unsigned tid = threadIdx.x;
  for (unsigned i = tid; i < 1024; i += blockDim.x) table[i] = vals[i];
  if (tid < 64) slots[tid] = -1;
  __syncthreads();
  int v = table[idx[tid] & 1023];
  int old = atomicExch(&slots[idx[tid] & 63], v);
  out[tid] = v + old;
}

// Divergence: per-thread trip counts, if/else with different addresses, an early exit.
__global__ void divergent_paths(float *out, const float *in, int limit) {
  __shared__ float s[1024];
  unsigned tid = threadIdx.x;
  for (unsigned i = tid; i < 1024; i += blockDim.x) s[i] = in[i];
  __syncthreads();
  float acc = 0.f;
  if (tid % 3 == 0) {
    acc += s[tid * 2];
  } else {
    acc += s[(tid * 5) % 1024];
  }
  for (unsigned i = 0; i < (tid & 7); ++i) acc += s[(tid * 8 + i * 32) % 1024];
  if (tid >= (unsigned)limit) {
    out[tid] = acc;
    return;
  }
  unsigned j = tid;
  while (s[j % 1024] < 0.5f && j < tid + 64) j += 7;  // data-dependent loop exit
  out[tid] = acc + s[j % 1024];
}

// Stream compaction within a warp: ballot, popc of the lower lanes, shared writes at the
// compacted position; a non-inlined device function; a __syncwarp.
__device__ __noinline__ int lower_count(unsigned mask) {
  return __popc(mask & ((1u << (threadIdx.x % 32)) - 1u));
}

__global__ void warp_compact(int *out, const int *in) {
  __shared__ int packed[8][32];
  __shared__ int counts[8];
  unsigned tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  int v = in[tid];
  bool keep = (v & 1) != 0;
  unsigned mask = __ballot_sync(0xffffffffu, keep);
  if (keep) packed[warp][lower_count(mask)] = v;
  if (lane == 0) counts[warp] = __popc(mask);
  __syncwarp();
  int total = counts[warp];
  int x = lane < total ? packed[warp][lane] : 0;
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  x += __shfl_xor_sync(0xffffffffu, x, 2);
  if (__all_sync(0xffffffffu, x >= 0)) x += packed[warp][(lane * 4) % 32];
  out[tid] = x;
}

// Blocks see different shared addresses (for --grid): row blockIdx.x of a padded tile.
__global__ void per_block_rows(float *out, const float *in) {
  __shared__ float t[4][40];
  unsigned tid = threadIdx.x;
  if (tid < 160) t[tid / 40][tid % 40] = in[blockIdx.x * 160 + tid];
  __syncthreads();
  out[blockIdx.x * blockDim.x + tid] = t[blockIdx.x % 4][(tid * (blockIdx.x + 1)) % 40];
}
