// Issue 26 (sm_90a): the uniform datapath's UPOPC, UBREV and UFLO (values that feed a TMA
// copy's coordinates live in uniform registers), ARRIVES (cp.async's arrival on an mbarrier),
// UBLKPF (bulk prefetches) and UTMAREDG (a TMA reduction into global memory). The project's own.
// Build: nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o ../ops90a.sm_90a.cubin ops90a.cu
#include <cuda.h>
#include <cstdint>

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return (unsigned)__cvta_generic_to_shared(p);
}

// the box at (x, y) of a 64 x 64 u32 tensor, x and y made from the params by popc, brev, clz
extern "C" __global__ void uniform_coords(const __grid_constant__ CUtensorMap in, unsigned *out,
                                          unsigned u, unsigned v) {
  __shared__ __align__(1024) unsigned tile[32 * 32];
  __shared__ __align__(8) uint64_t bar;
  unsigned bb = smem_addr(&bar);
  int x = (int)(__popc(u) + (__brev(v) >> 28)) & 32;
  int y = (int)__clz(u ^ v) & 32;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bb) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bb), "r"(4096)
                 : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(tile)), "l"(&in), "r"(x), "r"(y), "r"(bb)
        : "memory");
  }
  __syncthreads();
  asm volatile(
      "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W; }"
      ::"r"(bb) : "memory");
  for (int k = threadIdx.x; k < 32 * 32; k += blockDim.x) out[k] = tile[k];
}

// cp.async into shared with the arrival counted on an mbarrier; a bulk prefetch of global and
// of a tensor box; the tile then added into the tensor by a TMA reduction
extern "C" __global__ void async_more(const __grid_constant__ CUtensorMap acc, int *out,
                                      const int *g) {
  __shared__ __align__(1024) int tile[32 * 32];
  __shared__ __align__(8) uint64_t bar;
  unsigned bb = smem_addr(&bar), t = threadIdx.x;
  if (t == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bb), "r"(blockDim.x) : "memory");
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], 256;" ::"l"(g) : "memory");
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global [%0, {%1, %2}];" ::"l"(&acc), "r"(0),
                 "r"(0) : "memory");
  }
  __syncthreads();
  for (int k = t; k < 32 * 32; k += blockDim.x)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(smem_addr(&tile[k])),
                 "l"(g + k) : "memory");
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(bb) : "memory");
  asm volatile(
      "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W; }"
      ::"r"(bb) : "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (t == 0) {
    asm volatile(
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];"
        ::"l"(&acc), "r"(0), "r"(0), "r"(smem_addr(tile)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
  for (int k = t; k < 32 * 32; k += blockDim.x) out[k] = tile[k];
}
