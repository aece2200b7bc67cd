// The project's own kernels for tests/test_trace_spinwait.py: waits on flags that another
// warp or another block sets (issue 29). Built with
//   nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../spinwait.sm_90.cubin spinwait.cu

__device__ __forceinline__ int load_acquire(const int *p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release(int *p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Serial split-K in miniature: block z of a grid (1,1,S) sums its slice of `in` (each
// thread its column, through shared memory), waits until *flag == z, adds its partial to
// out (block 0 writes it), and hands the turn on: *flag = z + 1. Launch 128 threads a
// block; in holds S * 128 ints.
extern "C" __global__ void sw_splitk(const int *in, int *out, int *flag) {
  __shared__ int part[128];
  int z = blockIdx.z, t = threadIdx.x;
  part[t] = in[z * 128 + t] * (z + 1);
  __syncthreads();
  int mine = part[(t + 1) % 128];
  if (t == 0) {
    while (load_acquire(flag) != z) {
    }
  }
  __syncthreads();
  out[t] = (z == 0 ? 0 : out[t]) + mine;
  __threadfence();
  __syncthreads();
  if (t == 0) store_release(flag, z + 1);
}

// A handoff inside one block (128 threads): lane 0 of warp 1 spins on a shared flag that
// warp 3 sets after it filled data[]; warp 1 then copies data[] out. The spin comes first
// in the code, so a scheduler that runs the lowest instruction first starves warp 3.
extern "C" __global__ void sw_handoff_shared(const int *in, int *out) {
  __shared__ int data[32];
  __shared__ volatile int ready;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) ready = 0;
  __syncthreads();
  if (warp == 1 && lane == 0) {
    while (ready == 0) {
    }
  }
  __syncwarp();
  if (warp == 3) {
    data[lane] = in[lane] * 3;
    __threadfence_block();
    __syncwarp();
    if (lane == 0) ready = 1;
  }
  if (warp == 1) out[lane] = data[lane] + 1;
}

// The same handoff through a flag in global memory (zero before the launch).
extern "C" __global__ void sw_handoff_global(const int *in, int *out, int *flag) {
  __shared__ int data[32];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 1 && lane == 0) {
    while (load_acquire(flag) == 0) {
    }
  }
  __syncwarp();
  if (warp == 3) {
    data[lane] = in[lane] * 5;
    __syncwarp();
    __threadfence();
    if (lane == 0) store_release(flag, 1);
  }
  if (warp == 1) out[lane] = data[lane] + 1;
}

// Two waits in one block (128 threads), on two flags in global memory (zero before the
// launch): lanes 0-1 of warp 1 wait for flags[0], lanes 0-1 of warp 2 for flags[1]; warp 3 writes
// out[64..95], sets flags[1], writes out[96..127], sets flags[0]. Warp 2 copies the first
// half plus 1 into out[0..31], warp 1 the second half minus 1 into out[32..63].
extern "C" __global__ void sw_two_waits(const int *in, int *out, int *flags) {
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 1 && lane < 2) {
    while (load_acquire(&flags[0]) == 0) {
    }
  }
  __syncwarp();
  if (warp == 2 && lane < 2) {
    while (load_acquire(&flags[1]) == 0) {
    }
  }
  __syncwarp();
  if (warp == 3) {
    out[64 + lane] = in[lane] * 2;
    __syncwarp();
    __threadfence();
    if (lane == 0) store_release(&flags[1], 1);
    out[96 + lane] = in[32 + lane] * 7;
    __syncwarp();
    __threadfence();
    if (lane == 0) store_release(&flags[0], 1);
  }
  if (warp == 2) out[lane] = ((volatile int *)out)[64 + lane] + 1;
  if (warp == 1) out[32 + lane] = ((volatile int *)out)[96 + lane] - 1;
}

// Blocks that take turns in reverse (64 threads a block): block b waits, with its whole block
// at a barrier in the loop, until *flag == gridDim.x - 1 - b, folds its slice into out
// (out = out * 3 + in[b * 64 + 63 - t]) and passes the turn on with an atomicAdd. Block 0
// runs last: it waits on every later block.
extern "C" __global__ void sw_reverse(const int *in, int *out, int *flag) {
  __shared__ int s_turn;
  __shared__ int part[64];
  int b = blockIdx.x, t = threadIdx.x;
  part[t] = in[b * 64 + t];
  while (true) {
    if (t == 0) s_turn = load_acquire(flag);
    __syncthreads();
    int turn = s_turn;
    __syncthreads();
    if (turn == (int)gridDim.x - 1 - b) break;
  }
  out[t] = out[t] * 3 + part[63 - t];
  __threadfence();
  __syncthreads();
  if (t == 0) atomicAdd(flag, 1);
}

// A real deadlock: thread 0 of every block waits for a flag no thread ever sets.
extern "C" __global__ void sw_deadlock(int *flag, int *out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  if (threadIdx.x == 0) {
    while (load_acquire(flag) == 0) {
    }
  }
  __syncthreads();
  out[threadIdx.x] = s[63 - threadIdx.x];
}

// One warp (32 threads) whose halves take turns on one shared flag, in the one spin loop they
// share: turn 2r is lanes 16-31's, turn 2r + 1 lanes 0-15's. In its turn a half folds its row
// of `in` into acc (acc[j] = acc[j] * 3 + in[turn * 16 + j]) and hands the turn on; lanes 0-15
// then write acc to out[0..15]. The spin's YIELD lets the waiting half go past the loop's
// BSYNC as a part of its own; in the next round it spins in the same loop as the other part
// (legal with independent thread scheduling: __syncwarp of a half, a volatile flag). in holds
// 2 * rounds * 16 ints.
extern "C" __global__ void sw_halves(const int *in, int *out, int rounds) {
  __shared__ volatile int flag;
  __shared__ int acc[16];
  int lane = threadIdx.x % 32, j = lane % 16;
  unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  if (lane < 16) acc[j] = 0;
  if (lane == 0) flag = 0;
  __syncwarp();
  for (int r = 0; r < rounds; ++r) {
    int turn = 2 * r + (lane < 16 ? 1 : 0);
    while (flag != turn) {
    }
    __threadfence_block();
    acc[j] = acc[j] * 3 + in[turn * 16 + j];
    __threadfence_block();
    __syncwarp(half);
    if (j == 0) flag = turn + 1;
  }
  if (lane < 16) out[j] = acc[j];
}

// A relay whose waits resume in the order they began, not the reverse (64 threads a block,
// a grid of G >= 4 blocks, flags zero before the launch): block b < G/2 waits until
// flags[b] is set, block 0 by the last block, block b > 0 by block b - 1 after its own wait;
// the blocks from G/2 on wait for nothing. Each block writes row b of out (64 ints):
// in[b * 64 + t] * (b + 1), plus the row of the block it waited on; a block in the relay
// then sets the flag of the next (the last one of the relay sets flags[G/2], which nobody
// reads). Blocks 0, 1, ... are set aside one after the other, and must resume in that order.
extern "C" __global__ void sw_relay(const int *in, int *out, int *flags) {
  int b = blockIdx.x, t = threadIdx.x, g = gridDim.x, half = gridDim.x / 2;
  int v = in[b * 64 + t] * (b + 1);
  if (b < half) {
    if (t == 0) {
      while (load_acquire(&flags[b]) == 0) {
      }
    }
    __syncthreads();
    int from = b == 0 ? g - 1 : b - 1;
    v += ((volatile int *)out)[from * 64 + t];
  }
  out[b * 64 + t] = v;
  __threadfence();
  __syncthreads();
  if (t == 0 && b < half) store_release(&flags[b + 1], 1);
  if (t == 0 && b == g - 1) store_release(&flags[0], 1);
}

// A call chain as deep as `depth` in blocks run while block 0 waits (64 threads a block, a grid
// of G blocks, flag zero before the launch): block 0 waits until the last block sets *flag;
// every block writes out[b * 64 + t] = deep(depth, in[b * 64 + t]), one call a level (the
// recursion is no tail call: each level doubles what the next returned and subtracts its d).
__device__ __noinline__ unsigned deep(int d, unsigned x) {
  if (d == 0) return x;
  return deep(d - 1, x * 3u + 1u) * 2u - (unsigned)d;
}

extern "C" __global__ void sw_deep(const unsigned *in, unsigned *out, int *flag, int depth) {
  int b = blockIdx.x, t = threadIdx.x, g = gridDim.x;
  if (b == 0 && t == 0) {
    while (load_acquire(flag) == 0) {
    }
  }
  __syncthreads();
  out[b * 64 + t] = deep(depth, in[b * 64 + t]);
  __threadfence();
  __syncthreads();
  if (t == 0 && b == g - 1) store_release(flag, 1);
}

// A producer/consumer handshake over `tiles` tiles through two shared flags (any blockDim of
// at least 64 threads, a multiple of 32; every block alike): warp 0 waits until the last tile
// was taken (taken == k), fills tile k (buf[j] = in[k * 32 + j] * (b + 1)) and sets full = k + 1;
// warp 1 waits for full == k + 1, folds the tile into its sum (sum = sum * 3 + buf[j]) and sets
// taken = k + 1. The other warps wait at the barrier; warp 1 writes out[b * 32 + j] = sum. Each
// tile wakes each side once: 2 * tiles wake-ups a block.
extern "C" __global__ void sw_tiles(const int *in, int *out, int tiles) {
  __shared__ volatile int full, taken;
  __shared__ volatile int buf[32];
  int warp = threadIdx.x / 32, j = threadIdx.x % 32, b = blockIdx.x;
  if (threadIdx.x == 0) full = taken = 0;
  __syncthreads();
  if (warp == 0) {
    for (int k = 0; k < tiles; ++k) {
      while (taken != k) {
      }
      buf[j] = in[k * 32 + j] * (b + 1);
      __syncwarp();
      if (j == 0) full = k + 1;
    }
  } else if (warp == 1) {
    int sum = 0;
    for (int k = 0; k < tiles; ++k) {
      while (full != k + 1) {
      }
      sum = sum * 3 + buf[j];
      __syncwarp();
      if (j == 0) taken = k + 1;
    }
    out[b * 32 + j] = sum;
  }
  __syncthreads();
}
