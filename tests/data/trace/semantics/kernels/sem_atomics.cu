// shmem's own probes (issue 30): the native shared atomics whose cost was assumed, never
// measured (ATOMS.AND/OR/XOR/MIN/MAX/INC/DEC/EXCH/CAS, 32- and 64-bit where native) and
// atomicAdd with a constant other than 1 or with a per-lane value, its result used or not.
// Each kernel runs its atomic in 12 places one after another, barriers between them, each
// its own SASS instruction: in place k lane l takes part when bit l of LM is set, on word
// (l & AM) * ST of a shared array, or, where U is set, on word `u` (a kernel parameter: a
// uniform register address). The constants go through `one` (a parameter equal to 1) so
// that the compiler cannot fold them: lanes on one word still give per-lane addresses.
// Parameters: (out, one, u); out[t] = a checksum of what thread t got back.

typedef unsigned long long u64;

template <typename T, typename F>
__device__ __forceinline__ void place(T *s, u64 &sum, unsigned one, unsigned u, unsigned k,
                                      unsigned am, unsigned st, unsigned lm, bool uni, F f) {
  int t = threadIdx.x, l = t & 31;
  for (int i = t; i < 2048; i += blockDim.x) s[i] = (T)0;
  __syncthreads();
  unsigned a = uni ? u * one : (l & ((am + 1u) * one - 1u)) * (st * one);
  T v = (T)(t * 2654435761u + k * 40503u);
  if (((lm * one) >> l) & 1u) sum += (u64)f(&s[a], v, (T)(l & 3));
  __syncthreads();
}

#define PLACES(F)                                                                       \
  place(s, sum, one, u, 0, 0u, 1u, 0xFFFFFFFFu, false, F);   /* one word, every lane */ \
  place(s, sum, one, u, 1, 0u, 1u, 0xFFFFFFFFu, true, F);    /* one word, uniform */    \
  place(s, sum, one, u, 2, 0u, 1u, 0x0000FFFFu, false, F);   /* one word, lanes 0-15 */ \
  place(s, sum, one, u, 3, 0u, 1u, 0x80000421u, false, F);   /* one word, 4 lanes */    \
  place(s, sum, one, u, 4, 1u, 1u, 0xFFFFFFFFu, false, F);   /* 2 words, 2 banks */     \
  place(s, sum, one, u, 5, 1u, 32u, 0xFFFFFFFFu, false, F);  /* 2 words, 1 bank */      \
  place(s, sum, one, u, 6, 7u, 1u, 0xFFFFFFFFu, false, F);   /* 8 words */              \
  place(s, sum, one, u, 7, 7u, 1u, 0x000000FFu, false, F);   /* 8 words, 1 lane each */ \
  place(s, sum, one, u, 8, 31u, 1u, 0xFFFFFFFFu, false, F);  /* 32 words */             \
  place(s, sum, one, u, 9, 31u, 2u, 0xFFFFFFFFu, false, F);  /* 32 words, stride 2 */   \
  place(s, sum, one, u, 10, 31u, 32u, 0xFFFFFFFFu, false, F); /* 32 words, 1 bank */    \
  place(s, sum, one, u, 11, 1u, 1u, 0x55555555u, false, F);  /* even lanes, 1 word */

// EXPR: what the lane does with its word p, its value v and c = l & 3 (a compare value)
#define KERNEL(NAME, T, EXPR)                                                           \
  extern "C" __global__ void NAME(u64 *out, unsigned one, unsigned u) {                \
    __shared__ __align__(16) T s[2048];                                                \
    u64 sum = 0;                                                                       \
    auto f = [](T *p, T v, T c) -> T { (void)v, (void)c; return EXPR; };               \
    PLACES(f)                                                                          \
    out[threadIdx.x] = sum;                                                            \
  }

KERNEL(sa_add_v, unsigned, atomicAdd(p, v))
KERNEL(sa_add_v_red, unsigned, (atomicAdd(p, v), 0u))
KERNEL(sa_add_c5, unsigned, atomicAdd(p, 5u))
KERNEL(sa_add_c5_red, unsigned, (atomicAdd(p, 5u), 0u))
KERNEL(sa_add_c1, unsigned, atomicAdd(p, 1u))
KERNEL(sa_add_c1_red, unsigned, (atomicAdd(p, 1u), 0u))
KERNEL(sa_and_v, unsigned, atomicAnd(p, v))
KERNEL(sa_or_v, unsigned, atomicOr(p, v))
KERNEL(sa_or_c, unsigned, atomicOr(p, 16u))
KERNEL(sa_xor_v, unsigned, atomicXor(p, v))
KERNEL(sa_min_s, int, atomicMin(p, v))
KERNEL(sa_max_s, int, atomicMax(p, v))
KERNEL(sa_min_u, unsigned, atomicMin(p, v))
KERNEL(sa_max_u, unsigned, atomicMax(p, v))
KERNEL(sa_inc, unsigned, atomicInc(p, 1000u))
KERNEL(sa_dec, unsigned, atomicDec(p, 1000u))
KERNEL(sa_exch, unsigned, atomicExch(p, v))
KERNEL(sa_cas, unsigned, atomicCAS(p, c, v))
KERNEL(sa_exch64, u64, atomicExch(p, v))
KERNEL(sa_cas64, u64, atomicCAS(p, c, v))


// 128-bit: ATOMS.EXCH.128 and ATOMS.CAS.128 (PTX atom.shared.b128, sm_90) in the same places,
// on 16-byte words (W: the value in the low half)
struct __align__(16) W {
  u64 lo, hi;
  W() = default;
  __device__ W(unsigned long long v) : lo(v), hi(0) {}
  __device__ operator u64() const { return lo ^ hi; }
};

__device__ __forceinline__ W exch128(W *p, W v) {
  unsigned addr = (unsigned)__cvta_generic_to_shared(p);
  W o;
  asm volatile(
      "{.reg .b128 d, v; mov.b128 v, {%2, %3}; atom.shared.exch.b128 d, [%4], v;"
      " mov.b128 {%0, %1}, d;}"
      : "=l"(o.lo), "=l"(o.hi) : "l"(v.lo), "l"(v.hi), "r"(addr) : "memory");
  return o;
}

__device__ __forceinline__ W cas128(W *p, W c, W v) {
  unsigned addr = (unsigned)__cvta_generic_to_shared(p);
  W o;
  asm volatile(
      "{.reg .b128 d, v, c; mov.b128 v, {%2, %3}; mov.b128 c, {%4, %5};"
      " atom.shared.cas.b128 d, [%6], c, v; mov.b128 {%0, %1}, d;}"
      : "=l"(o.lo), "=l"(o.hi) : "l"(v.lo), "l"(v.hi), "l"(c.lo), "l"(c.hi), "r"(addr)
      : "memory");
  return o;
}

KERNEL(sa_exch128, W, exch128(p, v))
KERNEL(sa_cas128, W, cas128(p, c, v))
