// shmem's own kernels for op_misc (docs/hardware-model.md 9e): which warp-level instructions
// (shuffles of each form, votes, match, redux, warp barriers, sleeps, clocks) and which uses
// of a shared load's value cost op_misc wavefronts on the GPU. Each kernel runs its operation
// once (or 8 times: *_x8) in the lanes below `lanes` of every warp, then thread 0 writes
// out[blockIdx.x] (the scaffold alone: w_base). A result is kept by comparing it with a value
// it never has (KEEP), so that no operation is dropped and no extra store runs.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../warpops.sm_90.cubin warpops.cu
#include <cstdint>

__device__ __forceinline__ unsigned sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
#define NEVER 0x7fffffffu
#define COMMON()                                                  \
  __shared__ __align__(16) unsigned s[1024];                     \
  unsigned t = threadIdx.x, lane = t % 32;                       \
  bool act = lane < (unsigned)lanes;                             \
  unsigned mask = lanes >= 32 ? 0xffffffffu : (1u << lanes) - 1; \
  unsigned v = t * 3u + 1u;                                      \
  (void)s; (void)mask; (void)lane; (void)v; (void)act;
#define OUT() \
  if (t == 0) out[blockIdx.x] = 1;
#define KEEP(x) \
  if ((x) == NEVER) out[64 + t] = (x);
#define WARPOP(name, ...)                                         \
  extern "C" __global__ void name(unsigned *out, int lanes) {     \
    COMMON();                                                     \
    if (act) { __VA_ARGS__; }                                     \
    OUT();                                                        \
  }
#define X8(stmt) _Pragma("unroll") for (int i = 0; i < 8; ++i) { stmt; }

WARPOP(w_base, (void)0)
// shuffles: each form, the lane from an immediate or a register, 8 in a row, 64 bits
WARPOP(w_shfl_bfly, asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 0x1f, %1;" : "+r"(v) : "r"(mask)); KEEP(v))
WARPOP(w_shfl_bfly_x8, X8(asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 0x1f, %1;" : "+r"(v) : "r"(mask))); KEEP(v))
WARPOP(w_shfl_idx, asm volatile("shfl.sync.idx.b32 %0, %0, 0, 0x1f, %1;" : "+r"(v) : "r"(mask)); KEEP(v))
WARPOP(w_shfl_idx_reg, asm volatile("shfl.sync.idx.b32 %0, %0, %2, 0x1f, %1;" : "+r"(v) : "r"(mask), "r"((lane * 7) % 32)); KEEP(v))
WARPOP(w_shfl_up, asm volatile("shfl.sync.up.b32 %0, %0, 1, 0, %1;" : "+r"(v) : "r"(mask)); KEEP(v))
WARPOP(w_shfl_down, asm volatile("shfl.sync.down.b32 %0, %0, 1, 0x1f, %1;" : "+r"(v) : "r"(mask)); KEEP(v))
WARPOP(w_shfl_u64, { unsigned long long x = (unsigned long long)v << 20 | t; x = __shfl_xor_sync(mask, x, 2); KEEP((unsigned)(x ^ (x >> 32))); })
// votes and the other warp-wide operations
WARPOP(w_vote_any, { unsigned r; asm volatile("{ .reg .pred p, q; setp.ne.u32 p, %1, 5; vote.sync.any.pred q, p, %2; selp.u32 %0, 1, 0, q; }" : "=r"(r) : "r"(v), "r"(mask)); KEEP(r + v); })
WARPOP(w_ballot, { unsigned r; asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 5; vote.sync.ballot.b32 %0, p, %2; }" : "=r"(r) : "r"(v), "r"(mask)); KEEP(r ^ v); })
WARPOP(w_ballot_x8, X8({ unsigned r; asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 5; vote.sync.ballot.b32 %0, p, %2; }" : "=r"(r) : "r"(v), "r"(mask)); v += r; }); KEEP(v))
WARPOP(w_activemask, { unsigned r; asm volatile("activemask.b32 %0;" : "=r"(r)); KEEP(r ^ v); })
WARPOP(w_match_any, { unsigned r; asm volatile("match.any.sync.b32 %0, %1, %2;" : "=r"(r) : "r"(v % 4), "r"(mask)); KEEP(r ^ v); })
WARPOP(w_match_all, { unsigned r; asm volatile("match.all.sync.b32 %0, %1, %2;" : "=r"(r) : "r"(v % 4), "r"(mask)); KEEP(r ^ v); })
WARPOP(w_redux_add, { unsigned r; asm volatile("redux.sync.add.u32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(mask)); KEEP(r ^ v); })
WARPOP(w_redux_min, { unsigned r; asm volatile("redux.sync.min.u32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(mask)); KEEP(r ^ v); })
WARPOP(w_redux_and, { unsigned r; asm volatile("redux.sync.and.b32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(mask)); KEEP(r ^ v); })
WARPOP(w_redux_add_x8, X8({ unsigned r; asm volatile("redux.sync.add.u32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(mask)); v += r; }); KEEP(v))
WARPOP(w_syncwarp, asm volatile("bar.warp.sync %0;" ::"r"(mask) : "memory"))
WARPOP(w_nanosleep, asm volatile("nanosleep.u32 100;" ::: "memory"))
WARPOP(w_clock, { unsigned r; asm volatile("mov.u32 %0, %%clock;" : "=r"(r)); KEEP(r ^ v); })
WARPOP(w_globaltimer, { unsigned long long r; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(r)); KEEP((unsigned)r ^ v); })
// a shared load: its value waited on before the warp ends, not used at all (each lane then
// stores a constant to global memory, so that the load is not dropped), used after a
// barrier, and 8 loads each waited on
WARPOP(w_lds_used, { unsigned x; asm volatile("ld.shared.u32 %0, [%1];" : "=r"(x) : "r"(sa(&s[t % 1024])) : "memory"); KEEP(x); })
WARPOP(w_lds_unused, asm volatile("{ .reg .b32 x; ld.volatile.shared.u32 x, [%0]; }" ::"r"(sa(&s[t % 1024])) : "memory"); out[256 + t] = 2)
WARPOP(w_lds_used_x8, X8({ unsigned x; asm volatile("ld.shared.u32 %0, [%1];" : "=r"(x) : "r"(sa(&s[(t + 32 * i) % 1024])) : "memory"); v += x; KEEP(v); }))
extern "C" __global__ void w_lds_after_bar(unsigned *out, int lanes) {
  COMMON();
  unsigned x = 0;
  if (act) asm volatile("ld.shared.u32 %0, [%1];" : "=r"(x) : "r"(sa(&s[t % 1024])) : "memory");
  __syncthreads();
  KEEP(x);
  OUT();
}
extern "C" __global__ void w_bar_base(unsigned *out, int lanes) {
  COMMON();
  __syncthreads();
  OUT();
}
