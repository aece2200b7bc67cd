// Hopper lab (sm_90a): TMA tiles in every swizzle mode, read back with LDS (each thread reads
// its logical 16-byte chunks through the swizzle, and 4-byte column reads), written back by a
// TMA store; tensor maps of rank 1, 3 and 5, cache hints, prefetch, bulk copies and reductions.
// Build: nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o ../tma_probe.sm_90a.cubin tma_probe.cu
#include <cuda.h>
#include <cstdint>

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}
__device__ __forceinline__ void bar_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bar_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }"
      ::"r"(bar), "r"(parity) : "memory");
}

// the 16-byte chunk of byte offset `off` inside a tile whose rows are W bytes (W = 16: none)
template <int W> __device__ __forceinline__ unsigned swz(unsigned off) {
  if (W == 128) return off ^ (((off >> 7) & 7) << 4);
  if (W == 64) return off ^ (((off >> 7) & 3) << 4);
  if (W == 32) return off ^ (((off >> 7) & 1) << 4);
  return off;
}

// Tile: 64 rows of W bytes (W = swizzle width; 128 for no swizzle), u32 elements.
template <int W>
__device__ void tile(const CUtensorMap &in, const CUtensorMap &outm, uint4 *out, unsigned *col,
                     int x0, int y0) {
  constexpr int ROWB = W == 16 ? 128 : W, BYTES = 64 * ROWB;
  __shared__ __align__(1024) unsigned char t[BYTES];
  __shared__ __align__(1024) unsigned char u[BYTES];
  __shared__ __align__(8) uint64_t bar;
  unsigned b = smem_addr(&bar);
  if (threadIdx.x == 0) {
    bar_init(b, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    bar_expect(b, BYTES);
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(t)), "l"(&in), "r"(x0), "r"(y0), "r"(b)
        : "memory");
  }
  bar_wait(b, 0);
  for (int c = threadIdx.x; c < BYTES / 16; c += blockDim.x) {
    unsigned off = swz<W>(c * 16);
    uint4 v = *(const uint4 *)(t + off);
    out[c] = v;
    *(uint4 *)(u + off) = v;
  }
  // column reads: lane reads element `warp` of logical row `lane`
  unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  col[threadIdx.x] = *(const unsigned *)(t + swz<W>(lane * ROWB + 4 * w));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"(&outm), "r"(x0), "r"(y0), "r"(smem_addr(u)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}

#define TILE(W)                                                                             \
  extern "C" __global__ void tma_tile_##W(const __grid_constant__ CUtensorMap in,           \
                                          const __grid_constant__ CUtensorMap outm,         \
                                          uint4 *out, unsigned *col, int x0, int y0) {      \
    tile<W>(in, outm, out, col, x0, y0);                                                   \
  }
TILE(16)
TILE(32)
TILE(64)
TILE(128)

// rank 1, 3 and 5 loads (rank 3 with an L2 cache hint), a prefetch, the tensor-map prefetch,
// a bulk copy shared -> global and a bulk reduction; out gets what the loads brought.
extern "C" __global__ void tma_ranks(const __grid_constant__ CUtensorMap m1,
                                     const __grid_constant__ CUtensorMap m2,
                                     const __grid_constant__ CUtensorMap m3,
                                     const __grid_constant__ CUtensorMap m5, unsigned *out,
                                     unsigned *red) {
  __shared__ __align__(1024) unsigned s1[256];
  __shared__ __align__(1024) unsigned s3[512];
  __shared__ __align__(1024) unsigned s5[512];
  __shared__ __align__(8) uint64_t bar;
  unsigned b = smem_addr(&bar);
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(&m3) : "memory");
    bar_init(b, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    uint64_t pol;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];"
                 ::"l"(&m2), "r"(0), "r"(0) : "memory");
    bar_expect(b, 1024 + 2048 + 2048);
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2}], [%3];" ::"r"(smem_addr(s1)), "l"(&m1), "r"(64), "r"(b)
                 : "memory");
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 ".L2::cache_hint [%0], [%1, {%2, %3, %4}], [%5], %6;"
                 ::"r"(smem_addr(s3)), "l"(&m3), "r"(0), "r"(2), "r"(1), "r"(b), "l"(pol)
                 : "memory");
    asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4, %5, %6}], [%7];"
                 ::"r"(smem_addr(s5)), "l"(&m5), "r"(0), "r"(1), "r"(0), "r"(1), "r"(0), "r"(b)
                 : "memory");
  }
  bar_wait(b, 0);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) out[i] = s1[i];
  for (int i = threadIdx.x; i < 512; i += blockDim.x) out[256 + i] = s3[i];
  for (int i = threadIdx.x; i < 512; i += blockDim.x) out[768 + i] = s5[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%0], [%1], 1024;"
                 ::"l"(red), "r"(smem_addr(s1)) : "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 2048;"
                 ::"l"(out + 1280), "r"(smem_addr(s3)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}
