// shmem's own kernels for op_misc (docs/hardware-model.md 9e), fourth round after
// tests/data/trace/sregs found that four CTA barriers back to back cost 1, not 4: CTA
// barriers with nothing, arithmetic, a shared store or load, a global store or a shuffle
// between them, named barriers (bar.sync/bar.arrive with an id and a count), barriers that
// reduce (__syncthreads_count), an mbarrier's init alone; and more special registers read
// (the other lane masks). Arithmetic and a shuffle between barriers start from a clock read,
// so that ptxas keeps them there (a clock read costs nothing, warpops). Every thread stores its value to
// out[256 + threadIdx.x] (a store that runs costs nothing), then the threads with
// threadIdx.x 0 write out[blockIdx.x].
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../barriers.sm_90.cubin barriers.cu
#define BAR() asm volatile("bar.sync 0;" ::: "memory")
#define END(v)                    \
  out[256 + threadIdx.x] = (v);   \
  if (threadIdx.x == 0) out[blockIdx.x] = 1;
#define K(name, ...)                                                          \
  extern "C" __global__ void name(unsigned *out, const unsigned *in, int n) { \
    __shared__ unsigned s[1024];                                              \
    unsigned v = threadIdx.x;                                                 \
    (void)s;                                                                  \
    __VA_ARGS__;                                                              \
    END(v)                                                                    \
  }
#define SREG(name, reg) K(name, asm volatile("mov.u32 %0, " reg ";" : "=r"(v)))

K(b_none, (void)0)
K(b_bar1, BAR())
K(b_bar2, BAR(); BAR())
K(b_bar4, BAR(); BAR(); BAR(); BAR())
K(b_bar2_alu, BAR(); asm volatile("mov.u32 %0, %%clock;" : "=r"(v)); for (int i = 0; i < 8; ++i) asm volatile("mad.lo.u32 %0, %0, 3, 1;" : "+r"(v)); BAR())
K(b_bar2_sts, BAR(); ((volatile unsigned *)s)[threadIdx.x] = v; BAR())
K(b_bar2_lds, BAR(); v += ((volatile unsigned *)s)[threadIdx.x]; BAR())
K(b_bar2_stg, BAR(); out[512 + threadIdx.x] = v; BAR())
K(b_bar2_clock, BAR(); asm volatile("mov.u32 %0, %%clock;" : "=r"(v)); BAR())
K(b_bar2_shfl, BAR(); asm volatile("mov.u32 %0, %%clock;" : "=r"(v)); v = __shfl_xor_sync(0xffffffffu, v + threadIdx.x, 1); BAR())
K(b_bar_loop_sts, for (int j = 0; j < n; ++j) { ((volatile unsigned *)s)[(threadIdx.x + j) % 1024] = v; BAR(); })
K(b_named, asm volatile("bar.sync 1, %0;" ::"r"(blockDim.x) : "memory"))
K(b_named2, asm volatile("bar.sync 1, %0;" ::"r"(blockDim.x) : "memory"); asm volatile("bar.sync 2, %0;" ::"r"(blockDim.x) : "memory"))
K(b_arrive_sync, if (threadIdx.x < 32) asm volatile("bar.arrive 1, %0;" ::"r"(blockDim.x) : "memory"); else asm volatile("bar.sync 1, %0;" ::"r"(blockDim.x) : "memory"))
K(b_count2, v += __syncthreads_count(v & 1); v += __syncthreads_count(v & 2))
K(b_mbar_init, if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 32;" ::"r"((unsigned)__cvta_generic_to_shared(&s[0])) : "memory"))
SREG(b_lemask, "%lanemask_le")
SREG(b_gemask, "%lanemask_ge")
SREG(b_gtmask, "%lanemask_gt")
SREG(b_eqmask, "%lanemask_eq")
