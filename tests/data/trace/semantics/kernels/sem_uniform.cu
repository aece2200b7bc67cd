// shmem's own probes (issue 30), second round: the native shared atomics on an address the
// compiler knows is the same for every lane (a constant offset into a shared array: ATOMS
// takes it as a uniform register, [UR4+...]), with every lane, lanes 0-15, four lanes and
// the even lanes on, and then on a per-lane address that happens to be one word (as in
// sem_atomics.cu). Parameters: (out, one); out[t] = a checksum of what thread t got back.

typedef unsigned long long u64;

template <typename T, typename F>
__device__ __forceinline__ void at(T *s, u64 &sum, unsigned one, unsigned lm, int word, F f) {
  int t = threadIdx.x, l = t & 31;
  for (int i = t; i < 64; i += blockDim.x) s[i] = (T)0;
  __syncthreads();
  T v = (T)(t * 2654435761u + word * 40503u);
  if (((lm * one) >> l) & 1u) sum += (u64)f(&s[word], v, (T)(l & 3));
  __syncthreads();
}

#define KERNEL(NAME, T, EXPR)                                                           \
  extern "C" __global__ void NAME(u64 *out, unsigned one) {                            \
    __shared__ __align__(16) T s[64];                                                  \
    u64 sum = 0;                                                                       \
    auto f = [](T *p, T v, T c) -> T { (void)v, (void)c; return EXPR; };               \
    at(s, sum, one, 0xFFFFFFFFu, 0, f);  /* every lane */                              \
    at(s, sum, one, 0x0000FFFFu, 3, f);  /* lanes 0-15 */                              \
    at(s, sum, one, 0x80000421u, 7, f);  /* lanes 0, 5, 10, 31 */                      \
    at(s, sum, one, 0x55555555u, 1, f);  /* even lanes */                              \
    at(s, sum, one, 0xFFFFFFFFu, (int)(one - 1u) + 2, f); /* per-lane register: word 2 */ \
    out[threadIdx.x] = sum;                                                            \
  }

KERNEL(su_add_v, unsigned, atomicAdd(p, v))
KERNEL(su_add_v_red, unsigned, (atomicAdd(p, v), 0u))
KERNEL(su_and_v, unsigned, atomicAnd(p, v))
KERNEL(su_or_v, unsigned, atomicOr(p, v))
KERNEL(su_xor_v, unsigned, atomicXor(p, v))
KERNEL(su_min_s, int, atomicMin(p, v))
KERNEL(su_max_s, int, atomicMax(p, v))
KERNEL(su_min_u, unsigned, atomicMin(p, v))
KERNEL(su_max_u, unsigned, atomicMax(p, v))
KERNEL(su_inc, unsigned, atomicInc(p, 1000u))
KERNEL(su_dec, unsigned, atomicDec(p, 1000u))
KERNEL(su_exch, unsigned, atomicExch(p, v))
KERNEL(su_cas, unsigned, atomicCAS(p, c, v))
KERNEL(su_exch64, u64, atomicExch(p, v))
KERNEL(su_cas64, u64, atomicCAS(p, c, v))
