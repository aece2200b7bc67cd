// shmem's own kernels for issue 29's op_misc and remote-atomic wavefronts, measured on the
// H200. Each kernel runs one operation once per active thread between a fixed scaffold;
// the launch's whole-launch counters minus those of the scaffold alone (the `*_base`
// kernels) are the operation's own. Lanes below `lanes` of every warp take part (1 or 32).
// Three scaffolds:
//  * plain (p_*): the operation, then thread 0 writes out[blockIdx.x];
//  * mbarrier (m_*): thread 0 initialises eight mbarriers (count 2^20 - 1: no phase ever
//    completes), __syncthreads, the operation on barrier 0 (or the warp's own barrier),
//    __syncthreads, thread 0 writes;
//  * cluster (c_*): thread 0 initialises the eight mbarriers, a cluster barrier
//    (arrive.release + wait.acquire, aligned), the operation on the next rank's shared
//    memory (mapa), a cluster barrier, thread 0 writes.
// Build: nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o ../miscops.sm_90a.cubin miscops.cu
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
#define NEVER 0x7fffffffu
#define COMMON()                                                  \
  __shared__ __align__(16) unsigned long long mb[8];             \
  __shared__ __align__(16) unsigned s[1024];                     \
  unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;        \
  bool act = lane < (unsigned)lanes;                             \
  unsigned v = 0;                                                \
  (void)s; (void)warp; (void)mb;
#define INIT8()                                                                    \
  if (t == 0)                                                                      \
    for (int i = 0; i < 8; ++i)                                                    \
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(&mb[i])), "r"(0xfffff) : "memory");
#define OUT() \
  if (t == 0) out[blockIdx.x] = v + 1;
#define KEEP(x) \
  if ((x) == NEVER) out[64 + t] = (x);

// ---- plain scaffold
#define PLAIN(name, ...)                                              \
  extern "C" __global__ void name(unsigned *out, int lanes) {         \
    COMMON();                                                         \
    if (act) { __VA_ARGS__; }                                              \
    OUT();                                                            \
  }
PLAIN(p_base, (void)0)
PLAIN(p_sts, asm volatile("st.shared.u32 [%0], %1;" ::"r"(sa(&s[t % 1024])), "r"(t) : "memory"))
PLAIN(p_lds, { unsigned x; asm volatile("ld.shared.u32 %0, [%1];" : "=r"(x) : "r"(sa(&s[t % 1024])) : "memory"); KEEP(x); })
PLAIN(p_sts64_conf, asm volatile("st.shared.u64 [%0], %1;" ::"r"(sa(&s[(lane * 32) % 1024 + 2 * (lane / 32)])), "l"((unsigned long long)t) : "memory"))
PLAIN(p_sts16_conf, asm volatile("st.shared.u16 [%0], %1;" ::"r"(sa(&s[(lane * 32) % 1024])), "h"((unsigned short)t) : "memory"))
PLAIN(p_sts_conf, asm volatile("st.shared.u32 [%0], %1;" ::"r"(sa(&s[(lane * 32) % 1024])), "r"(t) : "memory"))
PLAIN(p_sts64, asm volatile("st.shared.u64 [%0], %1;" ::"r"(sa(&s[2 * lane])), "l"((unsigned long long)t) : "memory"))
PLAIN(p_lds64_conf, { unsigned long long x; asm volatile("ld.shared.u64 %0, [%1];" : "=l"(x) : "r"(sa(&s[(lane * 32) % 1024])) : "memory"); KEEP((unsigned)x ^ (unsigned)(x >> 32)); })
PLAIN(p_lds16_conf, { unsigned short x; asm volatile("ld.shared.u16 %0, [%1];" : "=h"(x) : "r"(sa(&s[(lane * 32) % 1024])) : "memory"); KEEP((unsigned)x + 0x7fff0000u); })
PLAIN(p_ldsm_x4, {
  unsigned a, b, c, d;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(sa(&s[lane * 4])) : "memory");
  KEEP(a + b + c + d);
})
PLAIN(p_membar_cta, asm volatile("membar.cta;" ::: "memory"))
PLAIN(p_membar_gl, asm volatile("membar.gl;" ::: "memory"))
PLAIN(p_fence_sc_cta, asm volatile("fence.sc.cta;" ::: "memory"))
PLAIN(p_fence_acqrel_cluster, asm volatile("fence.acq_rel.cluster;" ::: "memory"))
PLAIN(p_fence_proxy_async_cta, asm volatile("fence.proxy.async.shared::cta;" ::: "memory"))
PLAIN(p_fence_proxy_async, asm volatile("fence.proxy.async;" ::: "memory"))
PLAIN(p_fence_mbinit, asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"))
PLAIN(p_elect, {
  unsigned e;
  asm volatile("{\n.reg .pred P;\n.reg .b32 r;\nelect.sync r|P, %1;\nselp.u32 %0, 1, 0, P;\n}" : "=r"(e) : "r"(__activemask()));
  v += e;
})

extern "C" __global__ void p_bar(unsigned *out, int lanes) {
  COMMON();
  (void)act;
  __syncthreads();
  OUT();
}

// ---- mbarrier scaffold
#define MBAR(name, ...)                                               \
  extern "C" __global__ void name(unsigned *out, int lanes) {         \
    COMMON();                                                         \
    INIT8();                                                          \
    __syncthreads();                                                  \
    unsigned b0 = sa(&mb[0]), bw = sa(&mb[warp % 8]);                 \
    (void)b0; (void)bw;                                               \
    if (act) { __VA_ARGS__; }                                              \
    __syncthreads();                                                  \
    OUT();                                                            \
  }
MBAR(m_base, (void)0)
MBAR(m_init, asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bw), "r"(32) : "memory"))
MBAR(m_arrive, { unsigned long long st; asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(st) : "r"(b0) : "memory"); KEEP((unsigned)st); })
MBAR(m_arrive_count, { unsigned long long st; asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], 3;" : "=l"(st) : "r"(b0) : "memory"); KEEP((unsigned)st); })
MBAR(m_arrive_nostate, asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(b0) : "memory"))
MBAR(m_arrive_tx, asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" ::"r"(b0) : "memory"))
MBAR(m_expect_tx, asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 16;" ::"r"(b0) : "memory"))
MBAR(m_complete_tx, asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 0;" ::"r"(b0) : "memory"))
MBAR(m_arrive_drop, asm volatile("mbarrier.arrive_drop.shared::cta.b64 _, [%0];" ::"r"(b0) : "memory"))
MBAR(m_test_wait, {
  unsigned ok;
  asm volatile("{\n.reg .pred P;\nmbarrier.test_wait.parity.shared::cta.b64 P, [%1], 1;\nselp.u32 %0, 1, 0, P;\n}" : "=r"(ok) : "r"(b0) : "memory");
  v += ok;
})
MBAR(m_try_wait, {
  unsigned ok;
  asm volatile("{\n.reg .pred P;\nmbarrier.try_wait.parity.shared::cta.b64 P, [%1], 1;\nselp.u32 %0, 1, 0, P;\n}" : "=r"(ok) : "r"(b0) : "memory");
  v += ok;
})
MBAR(m_try_wait_open, {
  unsigned ok;
  asm volatile("{\n.reg .pred P;\nmbarrier.try_wait.parity.shared::cta.b64 P, [%1], 1, 1000;\nselp.u32 %0, 1, 0, P;\n}" : "=r"(ok) : "r"(b0) : "memory");
  v += ok;
})
MBAR(m_inval, asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(bw) : "memory"))
MBAR(m_atoms_add, { unsigned x; asm volatile("atom.shared.add.u32 %0, [%1], 1;" : "=r"(x) : "r"(sa(&s[lane])) : "memory"); KEEP(x); })

// ---- cluster scaffold
#define CLU(name, ...)                                                \
  extern "C" __global__ void name(unsigned *out, int lanes) {         \
    COMMON();                                                         \
    INIT8();                                                          \
    unsigned peer = (crank() + 1) % csize();                          \
    unsigned rb0 = mapa(sa(&mb[0]), peer);                            \
    unsigned own = mapa(sa(&mb[0]), crank());                         \
    unsigned ra = mapa(sa(&s[warp * 128]), peer);                     \
    (void)rb0; (void)own; (void)ra;                                   \
    csync();                                                          \
    if (act) { __VA_ARGS__; }                                              \
    csync();                                                          \
    OUT();                                                            \
  }
CLU(c_base, (void)0)
// a cluster barrier is every thread's: these run it in every lane whatever `lanes` says
// (the first round ran it in the active lanes only: a warp's other lanes never arrived)
#define CLU_ALL(name, ...)                                            \
  extern "C" __global__ void name(unsigned *out, int lanes) {         \
    COMMON();                                                         \
    INIT8();                                                          \
    (void)act;                                                        \
    csync();                                                          \
    __VA_ARGS__;                                                      \
    csync();                                                          \
    OUT();                                                            \
  }
CLU_ALL(c_sync_more, csync())
CLU_ALL(c_sync_relaxed, asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;" ::: "memory"))
CLU(c_remote_arrive, asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(rb0) : "memory"))
CLU(c_own_arrive, asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(own) : "memory"))
CLU(c_remote_arrive_tx, asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cluster.b64 _, [%0], 16;" ::"r"(rb0) : "memory"))
CLU(c_atom32, { unsigned x; asm volatile("atom.shared::cluster.add.u32 %0, [%1], 1;" : "=r"(x) : "r"(ra + 4 * lane) : "memory"); KEEP(x); })
CLU(c_red32, asm volatile("red.shared::cluster.add.u32 [%0], 1;" ::"r"(ra + 4 * lane) : "memory"))
CLU(c_atom64, { unsigned long long x; asm volatile("atom.shared::cluster.add.u64 %0, [%1], 1;" : "=l"(x) : "r"(ra + 8 * lane) : "memory"); KEEP((unsigned)x); })
CLU(c_cas32, { unsigned x; asm volatile("atom.shared::cluster.cas.b32 %0, [%1], 5, 6;" : "=r"(x) : "r"(ra + 4 * lane) : "memory"); KEEP(x); })
CLU(c_cas64, { unsigned long long x; asm volatile("atom.shared::cluster.cas.b64 %0, [%1], 5, 6;" : "=l"(x) : "r"(ra + 8 * lane) : "memory"); KEEP((unsigned)x); })
CLU(c_atom32_word, { unsigned x; asm volatile("atom.shared::cluster.add.u32 %0, [%1], 1;" : "=r"(x) : "r"(ra) : "memory"); KEEP(x); })
CLU(c_ld32, { unsigned x; asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(x) : "r"(ra + 4 * lane) : "memory"); KEEP(x); })
