// shmem's own cluster kernels for issue 29: distributed shared memory (DSMEM) and TMA
// multicast, measured on the H200. Every dsm_* kernel fills its CTA's array, syncs the
// cluster, makes ONE remote access per thread into the CTA `hop` ranks further on (hop 0:
// its own CTA through the cluster window), syncs the cluster again and writes what it got.
// Lane t addresses element (t * stride) % N of the peer's array (stride 0: every lane on
// one element). cg_map: cooperative_groups' map_shared_rank (a generic pointer into the
// peer's shared memory), cluster size from __cluster_dims__. mc_tile: rank 0 loads one TMA
// tile multicast into every CTA of its cluster (cluster size given at launch).
// Build: nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o ../dsm.sm_90a.cubin dsm.cu
#include <cooperative_groups.h>
#include <cuda.h>
#include <cstdint>
namespace cg = cooperative_groups;

__device__ __forceinline__ unsigned sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ unsigned crank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned csize() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void csync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ unsigned mapa(unsigned a, unsigned r) {
  unsigned p;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(p) : "r"(a), "r"(r));
  return p;
}
#define N 2048
#define FILL()                                                           \
  __shared__ __align__(16) unsigned s[N];                                \
  unsigned r = crank(), n = csize(), t = threadIdx.x;                    \
  for (unsigned i = t; i < N; i += blockDim.x) s[i] = r * 100000u + i;   \
  csync();                                                               \
  unsigned peer_rank = (r + hop) % n;

extern "C" __global__ void dsm_ld32(unsigned *out, int stride, int hop) {
  FILL();
  unsigned a = mapa(sa(&s[(t * stride) % N]), peer_rank), v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
  csync();
  out[blockIdx.x * blockDim.x + t] = v;
}

extern "C" __global__ void dsm_st32(unsigned *out, int stride, int hop) {
  FILL();
  unsigned a = mapa(sa(&s[(t * stride) % N]), peer_rank);
  asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(a), "r"(t + 7) : "memory");
  csync();
  out[blockIdx.x * blockDim.x + t] = s[t];
}

extern "C" __global__ void dsm_ld64(unsigned *out, int stride, int hop) {
  FILL();
  unsigned a = mapa(sa(&s[2 * ((t * stride) % (N / 2))]), peer_rank);
  unsigned long long v;
  asm volatile("ld.shared::cluster.u64 %0, [%1];" : "=l"(v) : "r"(a) : "memory");
  csync();
  out[blockIdx.x * blockDim.x + t] = (unsigned)v + (unsigned)(v >> 32);
}

extern "C" __global__ void dsm_ld128(unsigned *out, int stride, int hop) {
  FILL();
  unsigned a = mapa(sa(&s[4 * ((t * stride) % (N / 4))]), peer_rank), x, y, z, w;
  asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "r"(a) : "memory");
  csync();
  out[blockIdx.x * blockDim.x + t] = x + y + z + w;
}

extern "C" __global__ void dsm_atom32(unsigned *out, int stride, int hop) {
  FILL();
  unsigned a = mapa(sa(&s[(t * stride) % N]), peer_rank), v;
  asm volatile("atom.shared::cluster.add.u32 %0, [%1], %2;" : "=r"(v) : "r"(a), "r"(1u) : "memory");
  csync();
  out[blockIdx.x * blockDim.x + t] = v + s[t];
}

extern "C" __global__ void dsm_red32(unsigned *out, int stride, int hop) {
  FILL();
  unsigned a = mapa(sa(&s[(t * stride) % N]), peer_rank);
  asm volatile("red.shared::cluster.add.u32 [%0], %1;" ::"r"(a), "r"(1u) : "memory");
  csync();
  out[blockIdx.x * blockDim.x + t] = s[t];
}

extern "C" __global__ void __cluster_dims__(2, 1, 1) cg_map(unsigned *out) {
  __shared__ unsigned s[256];
  cg::cluster_group c = cg::this_cluster();
  unsigned t = threadIdx.x;
  s[t] = c.block_rank() * 1000 + t;
  c.sync();
  unsigned *peer = c.map_shared_rank(s, c.block_rank() ^ 1);
  unsigned v = peer[(t * 33) % 256];
  c.sync();
  out[blockIdx.x * blockDim.x + t] = v;
}

extern "C" __global__ void mc_tile(const __grid_constant__ CUtensorMap tm, unsigned *out) {
  __shared__ __align__(1024) unsigned tile[64 * 32];
  __shared__ __align__(8) uint64_t bar;
  unsigned b = sa(&bar), r = crank(), n = csize();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(8192) : "memory");
  }
  csync();
  if (threadIdx.x == 0 && r == 0) {
    unsigned short mask = (unsigned short)((1u << n) - 1);
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;"
        ::"r"(sa(tile)), "l"(&tm), "r"(0), "r"(0), "r"(b), "h"(mask) : "memory");
  }
  asm volatile(
      "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }"
      ::"r"(b), "r"(0) : "memory");
  for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x)
    out[blockIdx.x * 2048 + i] = tile[(i * 33) % 2048] + r;
  csync();
}
