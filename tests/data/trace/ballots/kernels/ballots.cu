// Ballots into a register on the block index (issue 30, shmem_cli/trace/emulator/alike/votes.py)
// and what real kernels do with one: a stream compaction's offsets (POPC of the ballot under
// the lane's SR_LTMASK), the warp's count (POPC), its leader (__ffs: BREV, FLO) and highest
// lane (__clz: FLO), and the uniform ballot of a block-wide flag (VOTEU into a uniform
// register). Each picks a warp's shared addresses, so the blocks fall into one class per
// outcome. The project's own kernels; totals are checked against every block run
// (tests/test_trace_ballots.py) and counted by hand there. bl_data ballots global data; bl_part,
// bl_both and bl_cluster (a partial warp's ballot, a ballot beside votes of one predicate on a
// 2D grid, a cluster CTA's role) are checked against every block run only.
#include <cooperative_groups.h>
#define N 256

__device__ __forceinline__ unsigned lanemask_lt() {
  unsigned m;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

// stream compaction: lane l of warp w of block b keeps x = 32 (8 b + w) + l where x % k == 0;
// the kept values are packed at the warp's front (POPC of the ballot below the lane), then
// read back with a stride of the warp's count (10 or 11 lanes kept: 2 wavefronts or 1)
extern "C" __global__ void bl_compact(int *out, int k) {
  __shared__ int s[N];
  int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  int x = blockIdx.x * N + t;
  bool keep = x % k == 0;
  unsigned mask = __ballot_sync(0xffffffff, keep);
  int n = __popc(mask);
  if (keep) s[warp * 32 + __popc(mask & lanemask_lt())] = x;
  __syncwarp();
  out[x] = s[(lane * n) % N];
}

// the leader of the lanes with (lane + b) % 5 == 0 (__ffs) sets the stride of a warp's read
extern "C" __global__ void bl_ffs(int *out) {
  __shared__ int s[32 * 32];
  int t = threadIdx.x, lane = t & 31;
  unsigned mask = __ballot_sync(0xffffffff, (lane + blockIdx.x) % 5 == 0);
  int lead = __ffs(mask);  // 1 + the lowest lane set
  s[t] = t;
  __syncthreads();
  out[blockIdx.x * N + t] = s[(lane * lead) % 1024];
}

// the highest lane below b % 32 + 1 (31 - __clz) and the reversed ballot (__brev) pick the row
extern "C" __global__ void bl_clz(int *out) {
  __shared__ int s[64 * 33];
  int t = threadIdx.x, lane = t & 31;
  unsigned mask = __ballot_sync(0xffffffff, lane <= blockIdx.x % 4);
  int top = 31 - __clz(mask);
  int low = __brev(mask) >> 28;  // lanes 0-3 of the ballot, reversed
  s[t] = t;
  __syncthreads();
  out[blockIdx.x * N + t] = s[lane * (top + 1) + low];
}

// a block-wide flag balloted (the same in every lane: a uniform ballot), then counted
extern "C" __global__ void bl_uniform(int *out) {
  __shared__ int s[32 * 32];
  int t = threadIdx.x, lane = t & 31;
  unsigned mask = __ballot_sync(0xffffffff, blockIdx.x % 3 == 1);
  int stride = 1 + (__popc(mask) >> 5);  // 2 where the flag holds, else 1
  s[t] = t;
  __syncthreads();
  out[blockIdx.x * N + t] = s[(lane * stride) % 1024];
}

// a ballot on global data: the stride is data-dependent, whatever the block
extern "C" __global__ void bl_data(int *out, const int *in) {
  __shared__ int s[32 * 32];
  int t = threadIdx.x, lane = t & 31;
  unsigned mask = __ballot_sync(0xffffffff, in[blockIdx.x * N + t] > 0);
  int lead = __ffs(mask);
  s[t] = t;
  __syncthreads();
  out[blockIdx.x * N + t] = s[(lane * lead) % 1024];
}

// bl_compact over `tiles` tiles a block (a grid-stride compaction's loop): lane l of warp w
// keeps x = 256 (tiles b + i) + 32 w + l where x % k == 0 in tile i, and the warp reads its
// tile back 16 times with the stride of its count
extern "C" __global__ void bl_tiles(int *out, int k, int tiles) {
  __shared__ int s[N];
  int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  int acc = 0;
  for (int i = 0; i < tiles; i++) {
    int x = (blockIdx.x * tiles + i) * N + t;
    bool keep = x % k == 0;
    unsigned mask = __ballot_sync(0xffffffff, keep);
    int n = __popc(mask);
    if (keep) s[warp * 32 + __popc(mask & lanemask_lt())] = x;
    __syncwarp();
    for (int j = 0; j < 16; j++) acc += s[(lane * n + j) % N];
    __syncwarp();
  }
  out[blockIdx.x * N + t] = acc;
}

// a ballot of the lanes that reach it: those below 8 (b % 4) + 4 (a partial warp), counted
extern "C" __global__ void bl_part(int *out) {
  __shared__ int s[32 * 32];
  int t = threadIdx.x, lane = t & 31;
  int n = 0;
  if (lane < 8 * (blockIdx.x % 4) + 4) {
    unsigned mask = __ballot_sync(__activemask(), ((lane + blockIdx.x) & 3) == 0);
    n = __popc(mask);
  }
  s[t] = t;
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[(lane * (n + 1)) % 1024];
}

// the ballot, __any_sync and __all_sync of one predicate of both axes of a 2D grid
extern "C" __global__ void bl_both(int *out) {
  __shared__ int s[32 * 32];
  int t = threadIdx.x, lane = t & 31;
  bool p = (lane * blockIdx.y + blockIdx.x) % 6 == 0;
  unsigned mask = __ballot_sync(0xffffffff, p);
  int any = __any_sync(0xffffffff, p);
  int all = __all_sync(0xffffffff, !p);
  s[t] = t;
  __syncthreads();
  int st = 1 + (__popc(mask) & 3) + any + 2 * all;
  out[(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + t] = s[(lane * st) % 1024];
}

// a cluster CTA's role: the first CTA of each pair ballots lanes below b % 5
extern "C" __global__ void __cluster_dims__(2, 1, 1) bl_cluster(int *out) {
  __shared__ int s[32 * 32];
  int t = threadIdx.x, lane = t & 31;
  unsigned rank = cooperative_groups::this_cluster().block_rank();
  unsigned mask = __ballot_sync(0xffffffff, rank == 0 && (lane < blockIdx.x % 5));
  int st = 1 + __popc(mask);
  s[t] = t;
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[(lane * st) % 1024];
}
