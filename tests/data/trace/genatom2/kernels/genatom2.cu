// shmem's own kernels for op_atom (docs/hardware-model.md 9e), after tests/data/trace/genatom
// (every lane on, adds only): atomics through a generic pointer that may point to shared or
// global memory (chosen at run time by `where`, so nvcc cannot tell the space), of each
// operation: a 32-bit and a 64-bit integer add, a 32-bit and a 64-bit compare-and-swap, an
// exchange, a signed and an unsigned min and max, and, or, xor, inc and a __half add. Which
// lanes do it is chosen at run time too: lane L of warp W does it where bit L of `mask` is on
// and W is not `off`; lane i works on word i * `stride` (stride 0: a warp's lanes all on one
// word). Then every thread copies the shared array's 4-byte word threadIdx.x out and the
// threads with threadIdx.x 0 write out[blockIdx.x].
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../genatom2.sm_90.cubin genatom2.cu
#include <cuda_fp16.h>
typedef unsigned long long u64;
#define K(name, T, op)                                                                \
  extern "C" __global__ void name(unsigned *out, unsigned *glob, int where, unsigned mask, \
                                  int off, int stride) {                              \
    __shared__ __align__(16) T s[256];                                                \
    s[threadIdx.x] = T{};                                                             \
    __syncthreads();                                                                  \
    unsigned i = threadIdx.x * stride;                                                \
    T *p = where ? reinterpret_cast<T *>(glob) + i : s + i;                           \
    if ((mask >> (threadIdx.x % 32) & 1) && threadIdx.x / 32 != off) {                \
      op;                                                                             \
    }                                                                                 \
    __syncthreads();                                                                  \
    out[256 + threadIdx.x] = reinterpret_cast<unsigned *>(s)[threadIdx.x];            \
    if (threadIdx.x == 0) out[blockIdx.x] = 1;                                        \
  }
K(g2_add32, unsigned, atomicAdd(p, 1u))
K(g2_add64, u64, atomicAdd(p, 1ull))
K(g2_cas32, unsigned, atomicCAS(p, 0u, threadIdx.x + 1u))
K(g2_cas64, u64, atomicCAS(p, 0ull, threadIdx.x + 1ull))
K(g2_exch, unsigned, atomicExch(p, threadIdx.x + 1u))
K(g2_min_s, int, atomicMin(p, -1 - int(threadIdx.x)))
K(g2_max_s, int, atomicMax(p, -1 - int(threadIdx.x)))
K(g2_min_u, unsigned, atomicMin(p, threadIdx.x + 1u))
K(g2_max_u, unsigned, atomicMax(p, threadIdx.x + 1u))
K(g2_and, unsigned, atomicAnd(p, threadIdx.x + 1u))
K(g2_or, unsigned, atomicOr(p, threadIdx.x + 1u))
K(g2_xor, unsigned, atomicXor(p, threadIdx.x + 1u))
K(g2_inc, unsigned, atomicInc(p, 5u))
K(g2_half, __half, atomicAdd(p, __float2half(1.f)))
