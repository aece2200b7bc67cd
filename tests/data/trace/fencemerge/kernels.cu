// The project's own kernels for two op_misc questions docs/hardware-model.md 9e leaves open
// (README.md): do CTA-scope fences that several warps run together cost less than 1 a warp
// execution, and what does a wgmma attention loop cost beyond the rule. Build: ./build.sh.
#include <cstdint>

// a dependent chain of n multiply-adds: no memory instruction, only arithmetic and a branch
__device__ __forceinline__ float chain(int n, float x) {
  for (int i = 0; i < n; ++i) x = x * 1.0001f + 0.5f;
  return x;
}

// ---- A: fences. Every warp leaves a barrier together, then waits (warp w runs w * n
// multiply-adds: n = 0 none, else the warps reach the fence apart), runs the fence once, and
// stores its value (a global store that runs costs none).
#define FENCES(name, fence)                                                    \
  extern "C" __global__ void name(float *out, int n) {                         \
    float x = (float)threadIdx.x;                                              \
    __syncthreads();                                                           \
    x = chain((int)(threadIdx.x >> 5) * n, x);                                 \
    fence;                                                                     \
    out[threadIdx.x] = x;                                                      \
  }
// MEMBAR.ALL.CTA, FENCE.VIEW.ASYNC.S
FENCES(f_pair, asm volatile("fence.proxy.async.shared::cta;" ::: "memory"))
// MEMBAR.SC.CTA
FENCES(f_sc, asm volatile("fence.sc.cta;" ::: "memory"))

// ptxas's FENCE.VIEW.ASYNC.S before an mbarrier init, here in every warp (its lane 0 inits
// the warp's own mbarrier), as Triton's device-side descriptor kernels run it
extern "C" __global__ void f_lone(float *out, int n) {
  __shared__ __align__(8) uint64_t mb[32];
  float x = (float)threadIdx.x;
  __syncthreads();
  x = chain((int)(threadIdx.x >> 5) * n, x);
  if ((threadIdx.x & 31) == 0) {
    unsigned a = (unsigned)__cvta_generic_to_shared(&mb[threadIdx.x >> 5]);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(1) : "memory");
  }
  out[threadIdx.x] = x;
}

// ---- B: wgmma loops of one warpgroup (128 threads) on shared memory that holds zeros:
// m64n16k16 f16 products, S = A B (both from shared memory) and O += P V (P from registers)
__shared__ __align__(1024) uint32_t tiles[2048];  // A 2 KiB, B 512 B, V 512 B (+ spare)

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

__device__ __forceinline__ uint32_t pack(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// each iteration: S = A B and wait (w_ss); O += P V with P fixed and wait (w_rs)
extern "C" __global__ void __launch_bounds__(128, 1) w_ss(float *out, int iters) {
  zero_tiles();
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float acc = 0;
  for (int it = 0; it < iters; ++it) {
    wg_fence();
    mma_ss(s, desc(0), desc(2048));
    wg_commit();
    wg_wait0();
    acc += s[0] + s[7];
  }
  out[threadIdx.x] = acc;
}

extern "C" __global__ void __launch_bounds__(128, 1) w_rs(float *out, int iters) {
  zero_tiles();
  float o[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  uint32_t p[4];
  for (int i = 0; i < 4; ++i) p[i] = pack((float)threadIdx.x, (float)i);
  for (int it = 0; it < iters; ++it) {
    wg_fence();
    mma_rs(o, p, desc(2560));
    wg_commit();
    wg_wait0();
  }
  for (int i = 0; i < 8; ++i) out[i * 128 + threadIdx.x] = o[i];
}

// the attention loop's shape (Triton's Hopper attention): S = A B, wait, the row maximum
// through two shuffles, P = S - max packed to f16, O += P V left in flight across the
// iteration's end (waited by the next iteration's wait, and after the loop). SHFLS 0: no
// shuffle; BAR: a CTA barrier after the O += P V is issued; CP: Triton's cp.async prefetch
// too (a 16-byte copy a thread after that barrier, waited for and a barrier at the top)
template <bool SHFLS, bool BAR, bool CP = false>
__device__ __forceinline__ void attention(float *out, int iters) {
  zero_tiles();
  float o[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  unsigned spare = (unsigned)__cvta_generic_to_shared(tiles) + 4096 + 16 * threadIdx.x;
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
    if (SHFLS) {
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
      m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
    }
    uint32_t p[4];
    for (int i = 0; i < 4; ++i) p[i] = pack(s[2 * i] - m, s[2 * i + 1] - m);
    wg_fence();
    mma_rs(o, p, desc(2560));
    wg_commit();
    if (BAR) __syncthreads();
    if (CP) {  // the next tile's 16 B a thread, global to shared, while O += P V runs
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(spare), "l"(out + 4 * threadIdx.x)
                   : "memory");
      asm volatile("cp.async.commit_group;" ::: "memory");
    }
  }
  wg_wait0();
  for (int i = 0; i < 8; ++i) out[i * 128 + threadIdx.x] = o[i];
}

extern "C" __global__ void __launch_bounds__(128, 1) w_attn(float *out, int iters) {
  attention<true, true>(out, iters);
}
extern "C" __global__ void __launch_bounds__(128, 1) w_attn_nobar(float *out, int iters) {
  attention<true, false>(out, iters);
}
extern "C" __global__ void __launch_bounds__(128, 1) w_attn_noshfl(float *out, int iters) {
  attention<false, true>(out, iters);
}
extern "C" __global__ void __launch_bounds__(128, 1) w_attn_cp(float *out, int iters) {
  attention<true, true, true>(out, iters);
}
// the same with two warpgroups (256 threads): one's shuffles while the other's wgmma run
extern "C" __global__ void __launch_bounds__(256, 1) w_attn_cp8(float *out, int iters) {
  attention<true, true, true>(out, iters);
}
