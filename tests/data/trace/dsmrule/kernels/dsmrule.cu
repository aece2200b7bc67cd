// shmem's own kernels for issue 29's DSMEM cost rule, measured on the H200. Every kernel fills
// its CTA's 4 KB array (word i of rank r holds r * 100000 + i), syncs the cluster, and each
// thread makes at most ONE access into distributed shared memory: lane l of warp w reads its
// pattern's entry l from `tab` (two ints: a byte offset, -1 for a lane that does nothing, and
// a hop) and accesses byte w * 1024 + offset of the CTA `hop` ranks further on in its cluster
// (hop 0: its own CTA through the cluster window). Then it syncs the cluster again and writes
// its CTA's whole array to `out` (1024 words a CTA). An atomic's returned value is written
// only where it can never be (a value no word holds), so that the atomic is kept as one.
// `mode` (cas only): 1 compares with the value the word holds (the swap happens), 0 with a
// value no word holds (it never happens).
// Build: nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o ../dsmrule.sm_90a.cubin dsmrule.cu
#include <cstdint>

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
#define N 1024
#define NEVER 0x7fffffffu
// the prologue: fill, sync, this lane's entry; `go` says whether it accesses, `a` where
#define BEGIN()                                                                   \
  __shared__ __align__(16) unsigned s[N];                                         \
  unsigned r = crank(), n = csize(), t = threadIdx.x, lane = t % 32;              \
  for (unsigned i = t; i < N; i += blockDim.x) s[i] = r * 100000u + i;            \
  csync();                                                                        \
  int off = tab[2 * lane], hop = tab[2 * lane + 1];                               \
  bool go = off >= 0;                                                             \
  unsigned local = (t / 32) * 1024u + (unsigned)(go ? off : 0);                   \
  unsigned peer = (r + (unsigned)hop) % n;                                        \
  unsigned a = mapa(sa((const char *)s + local), peer);
#define END()                                                                     \
  csync();                                                                        \
  for (unsigned i = t; i < N; i += blockDim.x) out[blockIdx.x * N + i] = s[i];

extern "C" __global__ void st8(unsigned *out, const int *tab, int mode) {
  BEGIN();
  if (go) asm volatile("st.shared::cluster.u8 [%0], %1;" ::"r"(a), "h"((unsigned short)(lane + 1)) : "memory");
  END();
}
extern "C" __global__ void st16(unsigned *out, const int *tab, int mode) {
  BEGIN();
  if (go) asm volatile("st.shared::cluster.u16 [%0], %1;" ::"r"(a), "h"((unsigned short)(lane + 0x101)) : "memory");
  END();
}
extern "C" __global__ void st32(unsigned *out, const int *tab, int mode) {
  BEGIN();
  if (go) asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(a), "r"(lane + 7) : "memory");
  END();
}
extern "C" __global__ void st64(unsigned *out, const int *tab, int mode) {
  BEGIN();
  unsigned long long v = ((unsigned long long)(lane + 9) << 32) | (lane + 7);
  if (go) asm volatile("st.shared::cluster.u64 [%0], %1;" ::"r"(a), "l"(v) : "memory");
  END();
}
extern "C" __global__ void st128(unsigned *out, const int *tab, int mode) {
  BEGIN();
  if (go)
    asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(lane + 7), "r"(lane + 8),
                 "r"(lane + 9), "r"(lane + 10) : "memory");
  END();
}
extern "C" __global__ void ld32(unsigned *out, const int *tab, int mode) {
  BEGIN();
  unsigned v = 0;
  if (go) asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
  END();
  out[gridDim.x * N + blockIdx.x * blockDim.x + t] = v;
}
extern "C" __global__ void atom32(unsigned *out, const int *tab, int mode) {
  BEGIN();
  unsigned v = 0;
  if (go) asm volatile("atom.shared::cluster.add.u32 %0, [%1], %2;" : "=r"(v) : "r"(a), "r"(1u) : "memory");
  END();
  if (v == NEVER) out[0] = v;
}
extern "C" __global__ void red32(unsigned *out, const int *tab, int mode) {
  BEGIN();
  if (go) asm volatile("red.shared::cluster.add.u32 [%0], %1;" ::"r"(a), "r"(1u) : "memory");
  END();
}
extern "C" __global__ void atom64(unsigned *out, const int *tab, int mode) {
  BEGIN();
  unsigned long long v = 0;
  if (go)
    asm volatile("atom.shared::cluster.add.u64 %0, [%1], %2;" : "=l"(v) : "r"(a), "l"(0x100000001ull) : "memory");
  END();
  if (v == NEVER) out[0] = (unsigned)v;
}
extern "C" __global__ void red64(unsigned *out, const int *tab, int mode) {
  BEGIN();
  if (go) asm volatile("red.shared::cluster.add.u64 [%0], %1;" ::"r"(a), "l"(0x100000001ull) : "memory");
  END();
}
extern "C" __global__ void cas32(unsigned *out, const int *tab, int mode) {
  BEGIN();
  unsigned word = (t / 32) * 256u + (unsigned)(go ? off : 0) / 4u;
  unsigned cmp = mode ? peer * 100000u + word : NEVER, v = 0;
  if (go)
    asm volatile("atom.shared::cluster.cas.b32 %0, [%1], %2, %3;" : "=r"(v) : "r"(a), "r"(cmp), "r"(lane + 7) : "memory");
  END();
  if (v == NEVER) out[0] = v;
}
extern "C" __global__ void cas64(unsigned *out, const int *tab, int mode) {
  BEGIN();
  unsigned word = (t / 32) * 256u + (unsigned)(go ? off : 0) / 4u;
  unsigned long long held = ((unsigned long long)(peer * 100000u + word + 1) << 32) | (peer * 100000u + word);
  unsigned long long cmp = mode ? held : ~0ull, v = 0;
  unsigned long long nv = ((unsigned long long)(lane + 9) << 32) | (lane + 7);
  if (go)
    asm volatile("atom.shared::cluster.cas.b64 %0, [%1], %2, %3;" : "=l"(v) : "r"(a), "l"(cmp), "l"(nv) : "memory");
  END();
  if (v == NEVER) out[0] = (unsigned)v;
}
