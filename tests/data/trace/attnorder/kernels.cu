// The project's own kernels for the op_misc question docs/hardware-model.md 9e leaves open
// after tests/data/trace/fencemerge (README.md): where a wgmma attention loop puts its warp
// shuffles relative to the O += P V group (before its arrive, between its wgmma, after its
// last one), and what that costs beyond the rule. Build: ./build.sh. Nothing here is
// upstream code.
#include <cstdint>

// one warpgroup's (or two's) m64n16k16 f16 products on shared memory that holds zeros
__shared__ __align__(1024) uint32_t tiles[2048];  // A 2 KiB, B 512 B, V 2 x 512 B, copies 4 KiB

// a no-swizzle K-major descriptor at byte offset `at` of `tiles`: LBO 128 B, SBO 256 B
__device__ __forceinline__ uint64_t desc(unsigned at) {
  unsigned base = (unsigned)__cvta_generic_to_shared(tiles) + at;
  return (uint64_t)((base >> 4) & 0x3fff) | (uint64_t)(128 >> 4) << 16 | (uint64_t)(256 >> 4) << 32;
}

__device__ __forceinline__ void zero_tiles() {
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) tiles[i] = 0;
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

#define D8 "{%0, %1, %2, %3, %4, %5, %6, %7}"
#define OUT8(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])

// S = A B: both operands from shared memory (scale-d 0: a fresh accumulator)
__device__ __forceinline__ void mma_ss(float *d, uint64_t a, uint64_t b) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 " D8 ", %8, %9, 0, 1, 1, 0, 0;"
               : OUT8(d) : "l"(a), "l"(b) : "memory");
}
// O += P V: P (64 x 16 f16) from four registers a thread, V from shared memory
__device__ __forceinline__ void mma_rs(float *d, const uint32_t *p, uint64_t v) {
  asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 " D8
               ", {%8, %9, %10, %11}, %12, 1, 1, 1, 0;"
               : OUT8(d) : "r"(p[0]), "r"(p[1]), "r"(p[2]), "r"(p[3]), "l"(v) : "memory");
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }
__device__ __forceinline__ void wg_wait1() { asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); }

// a butterfly shuffle in program order among the volatile asm (the wgmma); PINNED: nor moved
// across the barrier before it either (ptxas leaves it there)
template <bool PINNED = false>
__device__ __forceinline__ float bfly(float x, int lanes) {
  float y;
  if (PINNED)
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(y) : "f"(x), "r"(lanes) : "memory");
  else
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(y) : "f"(x), "r"(lanes));
  return y;
}
// the row sum's two shuffles (lanes 2, then 1)
template <bool PINNED = false>
__device__ __forceinline__ float rowsum(float l) {
  l += bfly<PINNED>(l, 2);
  return l + bfly<PINNED>(l, 1);
}

__device__ __forceinline__ uint32_t pack(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Where the row sum's two shuffles go, relative to the O += P V group (its arrive, its two
// wgmma): ptxas places the arrive (WARPGROUP.ARRIVE) right after the last write of P and moves
// shuffles P does not need into the group, so a kernel places them by what they feed
enum Sum {
  NONE,    // no row sum
  BEFORE,  // P needs the sum: both shuffles before the arrive
  MID,     // nothing the group needs: ptxas puts them between the group's wgmma (Triton's order)
  AFTER,   // after the barrier that follows the group (`__syncthreads_count`, BAR.RED, whose
           // count they add): while the group runs, outside its issue
};

// the attention loop: S = A B, wait; the row maximum's two shuffles (MAX; P needs them); P = S
// - max packed to f16; O += P V as a group of two wgmma (k = 32) with the row sum's two
// shuffles at SUM; the group left in flight across a barrier (BAR) and the loop's end, waited
// for by the next S's wait (or, WAIT1, also by a `wgmma.wait_group 1` right after its commit,
// which lets it run on); CP: Triton's cp.async prefetch too (a 16-byte copy a thread after
// that barrier, waited for and a barrier at the loop's top). Not unrolled: every iteration
// runs the same instructions.
template <bool MAX, Sum SUM, bool BAR, bool CP = false, bool WAIT1 = false>
__device__ __forceinline__ void attention(float *out, int iters) {
  zero_tiles();
  float o[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float l = 0;
  unsigned spare = (unsigned)__cvta_generic_to_shared(tiles) + 4096 + 16 * (threadIdx.x & 255);
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    float s[8];
    if (CP) {  // wait for the previous iteration's copy, then a barrier (Triton's loop top)
      asm volatile("cp.async.wait_all;" ::: "memory");
      __syncthreads();
    }
    wg_fence();
    mma_ss(s, desc(0), desc(2048));
    wg_commit();
    wg_wait0();
    float m = fmaxf(s[0], s[1]);
    if (MAX) {
      m = fmaxf(m, bfly(m, 2));
      m = fmaxf(m, bfly(m, 1));
    }
    float e = 0;
    for (int i = 0; i < 8; ++i) e += s[i] * 0.75f;
    if (SUM == BEFORE) e = rowsum(e);
    float f = SUM == BEFORE ? e : m;  // P's second operand: the sum where P needs it
    uint32_t p[8];
    for (int i = 0; i < 4; ++i) {
      p[i] = pack(s[2 * i] - m, s[2 * i + 1] - f);
      p[4 + i] = pack(s[2 * i + 1] - f, s[2 * i] - m);
    }
    wg_fence();
    mma_rs(o, p, desc(2560));
    if (SUM == MID) e = rowsum(e);
    mma_rs(o, p + 4, desc(3072));
    wg_commit();
    if (WAIT1) wg_wait1();
    if (SUM == AFTER)  // the barrier's count feeds the sum: its shuffles stay after it
      e = rowsum<true>(e * (float)__syncthreads_count(1));
    else if (BAR)
      __syncthreads();
    l = l * 0.5f + e;
    if (CP) {  // the next tile's 16 B a thread, global to shared, while O += P V runs
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(spare), "l"(out + 4 * threadIdx.x)
                   : "memory");
      asm volatile("cp.async.commit_group;" ::: "memory");
    }
  }
  wg_wait0();
  for (int i = 0; i < 8; ++i) out[i * blockDim.x + threadIdx.x] = o[i] + l;
}

#define ATTN(name, threads, ...)                                                         \
  extern "C" __global__ void __launch_bounds__(threads, 1) name(float *out, int iters) { \
    attention<__VA_ARGS__>(out, iters);                                                  \
  }
// no row sum: the row maximum's shuffles before the group's arrive only (the control)
ATTN(o_none, 128, true, NONE, true)
// the row sum's shuffles before the arrive, between the group's two wgmma, after the barrier
ATTN(o_before, 128, true, BEFORE, true)
ATTN(o_mid, 128, true, MID, true)
ATTN(o_after, 128, true, AFTER, true)
// o_mid without the barrier after the group
ATTN(o_mid_nobar, 128, true, MID, false)
// o_mid without the row maximum's shuffles: nothing of the memory pipe since the last
// completion (the S group's arrive) when the P V group's arrive comes
ATTN(o_mid_quiet, 128, false, MID, true)
// o_before with a `wgmma.wait_group 1` right after the group's commit
ATTN(o_before_w1, 128, true, BEFORE, true, false, true)
// Triton's whole loop (o_mid with the cp.async prefetch) of one warpgroup and of two, and
// the two warpgroups' with the sum before the arrive
ATTN(o_mid_cp, 128, true, MID, true, true)
ATTN(o_mid_cp8, 256, true, MID, true, true)
ATTN(o_before_cp8, 256, true, BEFORE, true, true)
