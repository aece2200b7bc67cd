// Hopper lab (sm_90a): thread-block clusters. cluster_dsmem: 2-CTA cluster (declared with
// __cluster_dims__), each CTA fills its shared array, the cluster barrier orders them, each
// reads its peer's array through mapa + ld.shared::cluster and stores into it with
// st.shared::cluster. cluster_multicast: rank 0 loads one TMA tile multicast into both CTAs
// of a cluster of 2 (given at launch); every CTA waits on its own mbarrier.
// Build: nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o ../cluster.sm_90a.cubin cluster.cu
#include <cuda.h>
#include <cstdint>

__device__ __forceinline__ unsigned sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;"
               ::: "memory");
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_dsmem(unsigned *out) {
  __shared__ unsigned s[256];
  __shared__ unsigned back[256];
  unsigned r = rank();
  s[threadIdx.x] = r * 1000 + threadIdx.x;
  cluster_sync();
  unsigned peer, v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(peer) : "r"(sa(&s[(threadIdx.x * 33) % 256])), "r"(r ^ 1));
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(peer) : "memory");
  unsigned pb;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(pb) : "r"(sa(&back[threadIdx.x])), "r"(r ^ 1));
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(pb), "r"(v + 1) : "memory");
  cluster_sync();
  out[blockIdx.x * 512 + threadIdx.x] = v;
  out[blockIdx.x * 512 + 256 + threadIdx.x] = back[threadIdx.x ^ 3];
}

extern "C" __global__ void cluster_multicast(const __grid_constant__ CUtensorMap tm, unsigned *out) {
  __shared__ __align__(1024) unsigned t[64 * 32];
  __shared__ __align__(8) uint64_t bar;
  unsigned b = sa(&bar), r = rank();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(8192) : "memory");
  }
  cluster_sync();
  if (threadIdx.x == 0 && r == 0) {
    unsigned short mask = 3;
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
        ::"r"(sa(t)), "l"(&tm), "r"(0), "r"(0), "r"(b), "h"(mask) : "memory");
  }
  asm volatile(
      "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }"
      ::"r"(b), "r"(0) : "memory");
  for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x)
    out[blockIdx.x * 2048 + i] = t[(i * 4 + (i >> 5)) % 2048] + r;
  cluster_sync();
}
