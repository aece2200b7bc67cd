// A persistent tile loop fed by TMA (issue 29/30), as CUTLASS 3.x's persistent GEMMs walk their
// tiles: block b takes tiles b, b + gridDim.x, b + 2 gridDim.x, ... below ntiles (its trip
// count differs between blocks), splits the tile index into a column and a row with a mask
// and a shift (as the tile scheduler's FastDivmod does, with no correction steps), loads the
// 32 x 32 float tile at (column, row) by TMA, transposes it through shared memory and stores
// it by TMA at the same place of `out`. Only global places differ between blocks of one trip
// count: the TMA store's first coordinate is the column, which the register after its shared
// source holds (UTMASTG [URa]: URa the shared source, URa+1 the column).
// Per tile (4 warps): 32 column loads of 32 wavefronts (a 128-byte row per lane: 32-way
// conflicted), 32 row stores of 1 wavefront, one TMA load and one TMA store.
// persistent_tma_odd is the same, but an odd block stores its tile from a second buffer (the
// shared source of its TMA store depends on the block index): its blocks never share a class
// with the even ones.
// Build: nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o persistent_tma.sm_90a.cubin persistent_tma.cu
#include <cuda.h>
#include <cstdint>

__device__ __forceinline__ unsigned sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

template <bool ODD>
__device__ __forceinline__ void walk(const CUtensorMap &in, const CUtensorMap &out, int shift,
                                     int ntiles) {
  __shared__ __align__(1024) float a[32 * 32];
  __shared__ __align__(1024) float b[2][32 * 32];
  __shared__ __align__(8) uint64_t bar;
  unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  unsigned src = ODD ? blockIdx.x & 1 : 0;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&bar)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  unsigned phase = 0;
  for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
    int x = (t & ((1 << shift) - 1)) * 32, y = (t >> shift) * 32;
    if (threadIdx.x == 0) {
      asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&bar)),
                   "r"(4096) : "memory");
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
          " [%0], [%1, {%2, %3}], [%4];" ::"r"(sa(a)), "l"(&in), "r"(x), "r"(y), "r"(sa(&bar))
          : "memory");
    }
    asm volatile(
        "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }"
        ::"r"(sa(&bar)), "r"(phase) : "memory");
    phase ^= 1;
    for (unsigned j = w; j < 32; j += 4) b[0][j * 32 + lane] = a[lane * 32 + j];
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                   ::"l"(&out), "r"(x), "r"(y), "r"(sa(b[src])) : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
    __syncthreads();
  }
}

extern "C" __global__ void __launch_bounds__(128)
    persistent_tma(const __grid_constant__ CUtensorMap in, const __grid_constant__ CUtensorMap out,
                   int shift, int ntiles) {
  walk<false>(in, out, shift, ntiles);
}

extern "C" __global__ void __launch_bounds__(128)
    persistent_tma_odd(const __grid_constant__ CUtensorMap in,
                       const __grid_constant__ CUtensorMap out, int shift, int ntiles) {
  walk<true>(in, out, shift, ntiles);
}
