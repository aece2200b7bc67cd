// shmem's own kernels for op_misc (docs/hardware-model.md 9e): which CTA barrier completions
// cost a wavefront. tests/data/trace/barriers, sregs, genatom and genatom2 read barriers back
// to back (nothing, arithmetic or branches between) once; miscops' m_base reads two barriers
// with nothing between 2 after thread 0's eight mbarrier inits (ptxas puts its own
// FENCE.VIEW.ASYNC.S before them). Each kernel: every thread loads in[t] and zeroes its word of
// out before the first barrier (so that ptxas keeps the pointers' constant loads and the
// addresses there), then the case, then stores its value to out[256 + t]. Between two
// barriers: nothing, an LDC (a constant bank read), a shared store, a global load or a shuffle,
// each kept there by a branch on its value around a trap that never runs (KEEP); before them
// thread 0's eight mbarrier inits, one init, the inits and fence.proxy.async.shared::cta
// (MEMBAR.ALL.CTA and FENCE.VIEW.ASYNC.S), the fence alone, or thread 0 alone doing arithmetic
// in a branch (the inits' control flow, nothing but arithmetic in it).
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90a -o ../barrules.sm_90a.cubin barrules.cu
#define BAR() asm volatile("bar.sync 0;" ::: "memory")
#define NEVER 0x7fffffffu
#define KEEP(x) \
  if ((x) == NEVER) asm volatile("trap;")
#define INIT(k)                                                                         \
  if (t == 0)                                                                           \
    for (int i = 0; i < (k); ++i)                                                       \
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(&mb[i])), "r"(0xfffff) \
               : "memory")
#define FENCE() \
  if (t == 0) asm volatile("fence.proxy.async.shared::cta;" ::: "memory")
#define K(name, ...)                                                          \
  extern "C" __global__ void name(unsigned *out, const unsigned *in, int n) { \
    __shared__ __align__(16) unsigned long long mb[8];                       \
    __shared__ unsigned s[1024];                                              \
    unsigned t = threadIdx.x;                                                 \
    unsigned v = in[t];                                                       \
    volatile unsigned *p = out + 256 + t;                                     \
    *p = 0;                                                                   \
    (void)s;                                                                  \
    (void)mb;                                                                 \
    (void)n;                                                                  \
    __VA_ARGS__;                                                              \
    *p = v;                                                                   \
  }

__device__ __forceinline__ unsigned sa(const void *q) { return (unsigned)__cvta_generic_to_shared(q); }
__constant__ unsigned cst[32];

K(r_bar1, BAR())
K(r_bar2, BAR(); BAR())
K(r_bar2_ldc, BAR(); {
  unsigned x;
  asm volatile("ld.const.u32 %0, [%1];" : "=r"(x) : "l"(&cst[v & 31]));
  KEEP(x);
  v += x;
} BAR())
K(r_bar2_sts, BAR(); ((volatile unsigned *)s)[t] = v; BAR())
K(r_bar2_ldg, BAR(); v += ((volatile const unsigned *)in)[t ^ 1]; BAR())
K(r_bar2_shfl, BAR(); {
  unsigned x = __shfl_xor_sync(0xffffffffu, v, 1);
  KEEP(x);
  v += x;
} BAR())
K(r_div_bar2, if (t == 0) {
  for (int i = 0; i < 8; ++i) asm volatile("mad.lo.u32 %0, %0, 3, 1;" : "+r"(v));
} BAR(); BAR())
K(r_init_bar1, INIT(8); BAR())
K(r_init_bar2, INIT(8); BAR(); BAR())
K(r_init1_bar2, INIT(1); BAR(); BAR())
K(r_init_fence_bar1, INIT(8); FENCE(); BAR())
K(r_init_fence_bar2, INIT(8); FENCE(); BAR(); BAR())
K(r_fence_bar1, FENCE(); BAR())
K(r_fence_bar2, FENCE(); BAR(); BAR())
