// Issue 31 lab (sm_90a): a uint4 tile[64 * 8] (64 rows of 128 bytes) that TMA fills from a 2-D
// tensor map, then each thread reads its own row's eight 16-byte chunks. Built with
// -DTMA_SWZ=3 the map uses the 128B swizzle mode and the reads go through it: uint4 index
// i ^ ((i >> 3) & 7) (CuTe Swizzle<3,0,3> on the uint4 index, Swizzle<3,4,3> on bytes);
// with the default TMA_SWZ=0 the map has no swizzle and the reads are plain. The project's own.
// Build: nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a [-DTMA_SWZ=3] tma_tile.cu
#include <cuda.h>
#include <cstdint>

#ifndef TMA_SWZ
#define TMA_SWZ 0
#endif

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

extern "C" __global__ void tma_rows(const __grid_constant__ CUtensorMap in, uint4 *out) {
  __shared__ __align__(1024) uint4 tile[64 * 8];
  __shared__ __align__(8) uint64_t bar;
  unsigned b = smem_addr(&bar), t = threadIdx.x;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (t == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(8192)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(tile)), "l"(&in), "r"(0), "r"(0), "r"(b)
        : "memory");
  }
  asm volatile(
      "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W; }"
      ::"r"(b) : "memory");
  uint4 acc = make_uint4(0, 0, 0, 0);
#pragma unroll
  for (unsigned k = 0; k < 8; ++k) {
    unsigned i = t * 8 + k;
    uint4 v = tile[TMA_SWZ ? i ^ ((i >> 3) & 7) : i];
    acc.x ^= v.x; acc.y += v.y; acc.z |= v.z; acc.w ^= v.w;
  }
  out[t] = acc;
}
