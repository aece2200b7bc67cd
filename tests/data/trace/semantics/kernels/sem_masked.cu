// shmem's own probes (issue 27): what Nsight Compute counts for a shared-memory instruction that
// the compiler PREDICATES (`@P0 LDS ...`) where no lane of a warp has its predicate on, beside
// warps with some or all lanes on, partial warps and warps whose other lanes exited before.
// The predicate is forced with inline PTX (`@q ld.shared...`), so ptxas keeps a guarded
// instruction instead of branching around it.
// Every kernel takes (out, m0..m3, x0..x3, stride): in warp w, lane l first exits when bit l of
// x_w is set, then runs each guarded instruction when bit l of m_w is set. Lane l addresses
// element (l * stride) of a 16 KB array at its width (ldmatrix/stmatrix rows of 16 bytes).
// out[t] = the sum of what thread t loaded (0 for lanes that exited).

#pragma nv_diag_suppress 550

#define PROLOGUE                                                                        \
  __shared__ __align__(16) unsigned s[4096];                                           \
  int t = threadIdx.x, l = t & 31, w = t >> 5;                                         \
  for (int i = t; i < 4096; i += blockDim.x) s[i] = i * 7u + 1u;                       \
  __syncthreads();                                                                     \
  unsigned xm = w == 0 ? x0 : w == 1 ? x1 : w == 2 ? x2 : x3;                          \
  unsigned pm = w == 0 ? m0 : w == 1 ? m1 : w == 2 ? m2 : m3;                          \
  if ((xm >> l) & 1u) return;                                                          \
  unsigned p = (pm >> l) & 1u;                                                         \
  unsigned base = (unsigned)__cvta_generic_to_shared(s);                               \
  unsigned a4 = base + ((l * stride) & 1023) * 4;                                      \
  unsigned a8 = base + ((l * stride) & 511) * 8;                                       \
  unsigned a16 = base + ((l * stride) & 255) * 16;                                     \
  unsigned acc = 0, r0 = 0, r1 = 0, r2 = 0, r3 = 0;

#define PARAMS                                                                          \
  unsigned *out, unsigned m0, unsigned m1, unsigned m2, unsigned m3, unsigned x0,       \
      unsigned x1, unsigned x2, unsigned x3, int stride

extern "C" __global__ void pm_loads(PARAMS) {
  PROLOGUE
  asm volatile("{.reg .pred q; setp.ne.u32 q, %1, 0; @q ld.shared.b32 %0, [%2];}"
               : "+r"(r0) : "r"(p), "r"(a4) : "memory");
  acc += r0;
  asm volatile("{.reg .pred q; setp.ne.u32 q, %2, 0; @q ld.shared.v2.b32 {%0, %1}, [%3];}"
               : "+r"(r0), "+r"(r1) : "r"(p), "r"(a8) : "memory");
  acc += r0 ^ r1;
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %4, 0; @q ld.shared.v4.b32 {%0, %1, %2, %3}, [%5];}"
      : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3) : "r"(p), "r"(a16) : "memory");
  acc += r0 ^ r1 ^ r2 ^ r3;
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %1, 0;"
      " @q ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%2];}"
      : "+r"(r0) : "r"(p), "r"(a16) : "memory");
  acc += r0;
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %2, 0;"
      " @q ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%3];}"
      : "+r"(r0), "+r"(r1) : "r"(p), "r"(a16) : "memory");
  acc += r0 ^ r1;
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %4, 0;"
      " @q ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%5];}"
      : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3) : "r"(p), "r"(a16) : "memory");
  acc += r0 ^ r1 ^ r2 ^ r3;
  out[t] = acc;
}

extern "C" __global__ void pm_stores(PARAMS) {
  PROLOGUE
  (void)acc;
  r0 = t, r1 = t + 1, r2 = t + 2, r3 = t + 3;
  asm volatile("{.reg .pred q; setp.ne.u32 q, %0, 0; @q st.shared.b32 [%1], %2;}"
               :: "r"(p), "r"(a4), "r"(r0) : "memory");
  asm volatile("{.reg .pred q; setp.ne.u32 q, %0, 0; @q st.shared.v2.b32 [%1], {%2, %3};}"
               :: "r"(p), "r"(a8), "r"(r0), "r"(r1) : "memory");
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %0, 0; @q st.shared.v4.b32 [%1], {%2, %3, %4, %5};}"
      :: "r"(p), "r"(a16), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %0, 0;"
      " @q stmatrix.sync.aligned.m8n8.x1.shared.b16 [%1], {%2};}"
      :: "r"(p), "r"(a16), "r"(r0) : "memory");
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %0, 0;"
      " @q stmatrix.sync.aligned.m8n8.x2.shared.b16 [%1], {%2, %3};}"
      :: "r"(p), "r"(a16), "r"(r0), "r"(r1) : "memory");
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %0, 0;"
      " @q stmatrix.sync.aligned.m8n8.x4.shared.b16 [%1], {%2, %3, %4, %5};}"
      :: "r"(p), "r"(a16), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
  out[t] = acc;
}

extern "C" __global__ void pm_atoms(PARAMS) {
  PROLOGUE
  (void)a8, (void)a16;
  asm volatile("{.reg .pred q; setp.ne.u32 q, %1, 0; @q atom.shared.add.u32 %0, [%2], %3;}"
               : "+r"(r0) : "r"(p), "r"(a4), "r"(t + 1u) : "memory");
  acc += r0;
  asm volatile("{.reg .pred q; setp.ne.u32 q, %0, 0; @q red.shared.add.u32 [%1], %2;}"
               :: "r"(p), "r"(a4), "r"(t + 3u) : "memory");
  asm volatile("{.reg .pred q; setp.ne.u32 q, %1, 0; @q atom.shared.exch.b32 %0, [%2], %3;}"
               : "+r"(r1) : "r"(p), "r"(a4), "r"(t + 5u) : "memory");
  acc += r1;
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %1, 0; @q atom.shared.cas.b32 %0, [%2], %3, %4;}"
      : "+r"(r2) : "r"(p), "r"(a4), "r"(r1), "r"(t + 7u) : "memory");
  acc += r2;
  asm volatile("{.reg .pred q; setp.ne.u32 q, %1, 0; @q atom.shared.max.s32 %0, [%2], %3;}"
               : "+r"(r3) : "r"(p), "r"(a4), "r"(t * 11u) : "memory");
  acc += r3;
  out[t] = acc;
}

// The predicate from the kernel's parameters only (the same in every lane and warp), bit k of
// `flags` guarding the k-th instruction: ptxas may keep it in a uniform predicate (@UPx).
extern "C" __global__ void pm_uniform(unsigned *out, unsigned flags, int stride) {
  __shared__ __align__(16) unsigned s[4096];
  int t = threadIdx.x, l = t & 31;
  for (int i = t; i < 4096; i += blockDim.x) s[i] = i * 7u + 1u;
  __syncthreads();
  unsigned base = (unsigned)__cvta_generic_to_shared(s);
  unsigned a4 = base + ((l * stride) & 1023) * 4;
  unsigned a16 = base + ((l * stride) & 255) * 16;
  unsigned acc = 0, r0 = 0, r1 = 0, r2 = 0, r3 = 0;
  asm volatile("{.reg .pred q; setp.ne.u32 q, %1, 0; @q ld.shared.b32 %0, [%2];}"
               : "+r"(r0) : "r"(flags & 1u), "r"(a4) : "memory");
  acc += r0;
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %4, 0; @q ld.shared.v4.b32 {%0, %1, %2, %3}, [%5];}"
      : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3) : "r"(flags & 2u), "r"(a16) : "memory");
  acc += r0 ^ r1 ^ r2 ^ r3;
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %4, 0;"
      " @q ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%5];}"
      : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3) : "r"(flags & 4u), "r"(a16) : "memory");
  acc += r0 ^ r1 ^ r2 ^ r3;
  asm volatile("{.reg .pred q; setp.ne.u32 q, %0, 0; @q st.shared.b32 [%1], %2;}"
               :: "r"(flags & 8u), "r"(a4), "r"(acc) : "memory");
  asm volatile("{.reg .pred q; setp.ne.u32 q, %1, 0; @q atom.shared.add.u32 %0, [%2], %3;}"
               : "+r"(r0) : "r"(flags & 16u), "r"(a4), "r"(t + 1u) : "memory");
  acc += r0;
  out[t] = acc;
}

// st.shared.v4 and stmatrix .x1 alone (in pm_stores ptxas branches around those two)
extern "C" __global__ void pm_stores2(PARAMS) {
  PROLOGUE
  (void)acc, (void)a4, (void)a8;
  r0 = t, r1 = t + 1, r2 = t + 2, r3 = t + 3;
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %0, 0; @q st.shared.v4.b32 [%1], {%2, %3, %4, %5};}"
      :: "r"(p), "r"(a16), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
  asm volatile(
      "{.reg .pred q; setp.ne.u32 q, %0, 0;"
      " @q stmatrix.sync.aligned.m8n8.x1.shared.b16 [%1], {%2};}"
      :: "r"(p), "r"(a16 + 4096), "r"(r1) : "memory");
  out[t] = p;
}
