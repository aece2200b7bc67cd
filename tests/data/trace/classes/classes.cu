// shmem's own kernels for issue 30: blocks that differ only through the block index, traced
// once per class of identical behaviour (shmem_cli/trace/emulator/alike/). Each kernel's
// totals are checked against running every block (tests/test_trace_classes.py).
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o classes.sm_90.cubin classes.cu
//        nvcc -cubin -lineinfo -O3 -arch=sm_80 -o classes.sm_80.cubin classes.cu (sm_80 code
//        reads blockDim and the parameters straight from the constant bank; no clusters)
#include <cooperative_groups.h>
#define N 256
namespace cg = cooperative_groups;

// the column stride is 1 + blockIdx.x % 3: three classes
extern "C" __global__ void cl_mod(float *out) {
  __shared__ float tile[N * 4];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  int s = 1 + blockIdx.x % 3;
  out[blockIdx.x * N + t] = tile[(t * s) % (N * 4)];
}

// a quotient by a constant (IMAD.HI and a shift): blocks below lim * 5 take the 2-way read
extern "C" __global__ void cl_div(float *out, int lim) {
  __shared__ float tile[N * 2];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  int q = blockIdx.x / 5;
  float v = 0.f;
  if (q < lim) v = tile[(t * 2) % (N * 2)];
  out[blockIdx.x * N + t] = v + tile[t];
}

// right shifts and masks: bit 2 of the block index picks the stride, bits 0-1 a guard
extern "C" __global__ void cl_bits(float *out) {
  __shared__ float tile[N * 8];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  unsigned b = blockIdx.x;
  int s = ((b >> 2) & 1) ? 8 : 1;
  float v = tile[(t * s) % (N * 8)];
  if ((b & 3u) == 2u) v += tile[(t * 4) % (N * 8)];
  out[b * N + t] = v;
}

// a trip count through min: blocks at and past cap loop cap times
extern "C" __global__ void cl_min(float *out, int cap) {
  __shared__ float tile[N];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  int trips = min((int)blockIdx.x, cap);
  float acc = 0.f;
  for (int i = 0; i < trips; ++i) acc += tile[(t * 2 + i) % N];
  out[blockIdx.x * N + t] = acc;
}

// a causal loop bound: block b walks (b + 1) * 64 keys, 64 at a time, like attention's
// diagonal; max() of the two axes for a second, 2-D trip count
extern "C" __global__ void cl_causal(float *out, int bm) {
  __shared__ float tile[N];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  float acc = 0.f;
  int end = (blockIdx.x + 1) * bm;
  for (int k = 0; k < end; k += bm) acc += tile[(t + k / bm) % N];
  int more = max((int)blockIdx.y, 1);
  for (int k = 0; k < more; ++k) acc += tile[(t * 3 + k) % N];
  out[(blockIdx.y * gridDim.x + blockIdx.x) * N + t] = acc;
}

// a guard moving along two axes at once, and one on z
extern "C" __global__ void cl_axes(float *out, int lim) {
  __shared__ float tile[N * 4];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  float v = 0.f;
  if ((int)(blockIdx.x + 2 * blockIdx.y) < lim) v = tile[(t * 4) % (N * 4)];
  if (blockIdx.z == 1) v += tile[(t * 2) % (N * 4)];
  out[((blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * N + t] = v;
}

// a remainder by a runtime value: (b * N + t) % n decides which lanes read
extern "C" __global__ void cl_rem(float *out, int n) {
  __shared__ float tile[N * 2];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  float v = 0.f;
  if ((blockIdx.x * N + t) % n < 64) v = tile[(t * 2) % (N * 2)];
  out[blockIdx.x * N + t] = v;
}

// refused: the guard reads shared memory written from the block index (no form)
extern "C" __global__ void cl_smem(float *out) {
  __shared__ float tile[N * 2];
  __shared__ int flag;
  int t = threadIdx.x;
  tile[t] = t;
  if (t == 0) flag = blockIdx.x & 1;
  __syncthreads();
  float v = 0.f;
  if (flag) v = tile[(t * 2) % (N * 2)];
  out[blockIdx.x * N + t] = v;
}

// refused: the guard reads the clock (a value the emulator cannot compute)
extern "C" __global__ void cl_clock(float *out) {
  __shared__ float tile[N * 2];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  float v = 0.f;
  if ((clock() + blockIdx.x) & 1) v = tile[(t * 2) % (N * 2)];
  out[blockIdx.x * N + t] = v;
}

// refused: a float computed from the block index decides (I2F: no form)
extern "C" __global__ void cl_float(float *out) {
  __shared__ float tile[N * 2];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  float v = 0.f;
  if (__fsqrt_rn((float)blockIdx.x) > 1.5f) v = tile[(t * 2) % (N * 2)];
  out[blockIdx.x * N + t] = v;
}

// causal attention's shape (make bench): block (x, y) walks keys 0..(x + 1) * 64 of its head
// y in steps of 64, reading a 64-wide tile each step; x decides the trip count, y nothing
extern "C" __global__ void cl_attn(float *out, int bm) {
  __shared__ float keys[64 * 65];
  int t = threadIdx.x;
  for (int i = t; i < 64 * 65; i += blockDim.x) keys[i] = i;
  __syncthreads();
  float acc = 0.f;
  int end = (blockIdx.x + 1) * bm;
  for (int k = 0; k < end; k += bm)
    for (int j = 0; j < 64; j += 8) acc += keys[(t % 64) * 65 + ((j + k / bm + t / 64) & 63)];
  out[(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + t] = acc;
}

#if __CUDA_ARCH__ >= 900
// clusters of 2 CTAs: cluster c loops c % 3 + 1 times, each CTA with the stride its rank
// gives, then reads its peer's tile through distributed shared memory: three classes of
// clusters
extern "C" __global__ void __cluster_dims__(2, 1, 1) cl_cluster(float *out) {
  __shared__ float tile[N * 4];
  cg::cluster_group cluster = cg::this_cluster();
  int t = threadIdx.x;
  tile[t] = t;
  cluster.sync();
  unsigned rank = cluster.block_rank();
  int trips = (blockIdx.x / 2) % 3 + 1;
  float acc = 0.f;
  for (int i = 0; i < trips; ++i) acc += tile[(t * (1 + rank) + i) % (N * 4)];
  float *peer = cluster.map_shared_rank(tile, rank ^ 1);
  acc += peer[t];
  cluster.sync();
  out[blockIdx.x * N + t] = acc;
}
#endif

// a persistent kernel: each block walks tiles blockIdx.x, + gridDim.x, ... below tiles; a
// tile's row (tile / tn, a runtime divisor) guards rows past m, its column (tile % tn)
// places the read
extern "C" __global__ void cl_persist(float *out, int tiles, int tn, int m) {
  __shared__ float tile_s[N * 2];
  int t = threadIdx.x;
  float acc = 0.f;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int tm = tile / tn, tc = tile % tn;
    tile_s[t] = t + tm;
    __syncthreads();
    if (tm * 64 + t / 4 < m) acc += tile_s[(t * 2 + tc) % (N * 2)];
    __syncthreads();
  }
  out[blockIdx.x * N + t] = acc;
}

// the bounds check of nearly every kernel, through blockDim.x (a constant bank read)
extern "C" __global__ void cl_bdim(float *out, int n) {
  __shared__ float tile[N * 2];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + t;
  float v = 0.f;
  if (i < n) v = tile[(t * 2) % (N * 2)];
  out[blockIdx.x * N + t] = v;
}

// two sides that both move with the block: a = b * 7 % 13 against c = (b * 3 + t / 64) % 11
// (each thread's c its own), and an unsigned order of two block values; each decides which
// lanes read
extern "C" __global__ void cl_two(float *out) {
  __shared__ float tile[N * 4];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  int b = blockIdx.x;
  int a = b * 7 % 13;
  int c = (b * 3 + t / 64) % 11;
  float v = 0.f;
  if (a < c) v = tile[(t * 4) % (N * 4)];
  if ((unsigned)(b % 5) <= (unsigned)(b / 3 % 4)) v += tile[(t * 2) % (N * 4)];
  out[b * N + t] = v;
}

// an unsigned division by a divisor that moves with the block (nvcc's I2F.RP, MUFU.RCP,
// F2I sequence): the quotient places the read
extern "C" __global__ void cl_udiv(float *out) {
  __shared__ float tile[N * 4];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  unsigned d = blockIdx.x % 5 + 1;
  unsigned q = (t + 64u) / d;
  out[blockIdx.x * N + t] = tile[(q * 3) % (N * 4)];
}

// a signed division by a divisor that moves with the block, its sign too: the quotient
// decides which lanes read
extern "C" __global__ void cl_sdiv(float *out) {
  __shared__ float tile[N * 4];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  int s = (int)(blockIdx.x % 7) - 3;
  if (s == 0) s = 2;
  int r = (t - 128) / s;
  float v = 0.f;
  if (r > 20) v = tile[(t * 2) % (N * 4)];
  out[blockIdx.x * N + t] = v;
}

// refused: one side has no form ((int)(b * 0.5f): FMUL is not evaluated), the other does
// (b % 4): the compare is not evaluated on the side that has one alone
extern "C" __global__ void cl_half(float *out) {
  __shared__ float tile[N * 2];
  int t = threadIdx.x;
  tile[t] = t;
  __syncthreads();
  int b = blockIdx.x;
  float v = 0.f;
  if ((int)(b * 0.5f) > b % 4) v = tile[(t * 2) % (N * 2)];
  out[b * N + t] = v;
}
