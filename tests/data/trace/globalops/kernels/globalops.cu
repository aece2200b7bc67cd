// shmem's own kernels for op_misc (docs/hardware-model.md 9e), second round after
// tests/data/trace/warpops: which global-memory instructions cost op_misc wavefronts when a
// warp runs them and when it reaches them with every lane's guard false (loads, stores,
// generic ones, atomics and reductions), and what a transpose's global-to-shared-to-global
// path adds. Each kernel runs its operation in the lanes below `lanes` of every warp, then
// thread 0 writes out[blockIdx.x]. A guard that is never true comes from NEVER_P.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../globalops.sm_90.cubin globalops.cu
#include <cstdint>

#define COMMON()                                                  \
  __shared__ __align__(16) unsigned s[1024];                     \
  unsigned t = threadIdx.x, lane = t % 32;                       \
  bool act = lane < (unsigned)lanes;                             \
  (void)s; (void)lane; (void)act;
#define OUT() \
  if (t == 0) out[blockIdx.x] = 1;
#define GOP(name, ...)                                                              \
  extern "C" __global__ void name(unsigned *out, unsigned *in, int lanes) {         \
    COMMON();                                                                       \
    if (act) { __VA_ARGS__; }                                                       \
    OUT();                                                                          \
  }
// a predicate that is never true, kept as a guard: a thread's own value (operand 0, or 1 after
// an output: t ^ lanes) > 5000, not uniform, so that ptxas keeps the instruction predicated
#define NEVER_P "{ .reg .pred p; setp.gt.u32 p, %0, 5000; "
#define NEVER_P1 "{ .reg .pred p; setp.gt.u32 p, %1, 5000; "

GOP(g_base, (void)0)
// executed: stores, loads (each load's value stored), atomics and reductions
GOP(g_stg, out[256 + t] = t)
GOP(g_stg_x4, out[256 + t] = t; out[512 + t] = t; out[768 + t] = t; out[1024 + t] = t)
GOP(g_ldg_stg, out[256 + t] = in[t])
GOP(g_atomg, atomicAdd(&out[256 + t], 1u))
GOP(g_atomg_ret, out[512 + t] = atomicAdd(&out[256 + t], 1u))
GOP(g_red, asm volatile("red.global.add.u32 [%0], 1;" ::"l"(&out[256 + t]) : "memory"))
// reached with every lane's guard false: a load (its register then stored), a store, generic
// ones, an atomic, a reduction
GOP(g_ldg_off, {
  unsigned x = 7;
  asm volatile(NEVER_P1 "@p ld.global.u32 %0, [%2]; }" : "+r"(x) : "r"(t ^ (unsigned)lanes), "l"(&in[t]) : "memory");
  out[256 + t] = x;
})
GOP(g_stg_off, asm volatile(NEVER_P "@p st.global.u32 [%1], %2; }" ::"r"(t ^ (unsigned)lanes), "l"(&out[256 + t]), "r"(t) : "memory"))
GOP(g_st_generic_off, asm volatile(NEVER_P "@p st.u32 [%1], %2; }" ::"r"(t ^ (unsigned)lanes), "l"(&out[256 + t]), "r"(t) : "memory"))
GOP(g_ld_generic_off, {
  unsigned x = 7;
  asm volatile(NEVER_P1 "@p ld.u32 %0, [%2]; }" : "+r"(x) : "r"(t ^ (unsigned)lanes), "l"(&in[t]) : "memory");
  out[256 + t] = x;
})
GOP(g_atomg_off, {
  unsigned x = 7;
  asm volatile(NEVER_P1 "@p atom.global.add.u32 %0, [%2], 1; }" : "+r"(x) : "r"(t ^ (unsigned)lanes), "l"(&out[256 + t]) : "memory");
  out[512 + t] = x;
})
GOP(g_red_off, asm volatile(NEVER_P "@p red.global.add.u32 [%1], 1; }" ::"r"(t ^ (unsigned)lanes), "l"(&out[256 + t]) : "memory"))
GOP(g_sts_off, asm volatile(NEVER_P "@p st.shared.u32 [%1], %2; }" ::"r"(t ^ (unsigned)lanes), "r"((unsigned)__cvta_generic_to_shared(&s[t % 1024])), "r"(t) : "memory"))
// a transpose's paths: global to shared, shared to global, both around a barrier
GOP(g_ldg_sts, ((volatile unsigned *)s)[t % 1024] = in[t])
GOP(g_lds_stg, out[256 + t] = ((volatile unsigned *)s)[(t * 33) % 1024])
extern "C" __global__ void g_tile(unsigned *out, unsigned *in, int lanes) {
  COMMON();
  if (act) s[t % 1024] = in[t];
  __syncthreads();
  if (act) out[256 + t] = s[(t * 33) % 1024];
  OUT();
}
