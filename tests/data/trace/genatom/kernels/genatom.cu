// shmem's own kernels for op_misc (docs/hardware-model.md 9e), after the half2 atomic loops of
// tests/data/trace/casloops read 1 a warp beyond the rule: atomics through a generic pointer
// that may point to shared or global memory (chosen by `where`, so nvcc cannot tell the
// space), of each width and type: a 32-bit integer add, a float add, a __half2 add (the
// generic ATOM that fails on shared memory and falls back to a shared CAS loop), a
// __nv_bfloat162 add, a 64-bit integer add, a double add. Every thread adds to its own word;
// then the threads with threadIdx.x 0 write out[blockIdx.x].
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -diag-suppress 550 -o ../genatom.sm_90.cubin genatom.cu
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define K(name, T, add)                                                              \
  extern "C" __global__ void name(unsigned *out, unsigned *glob, int where) {       \
    __shared__ __align__(16) T s[256];                                               \
    s[threadIdx.x] = T{};                                                            \
    __syncthreads();                                                                 \
    T *p = where ? reinterpret_cast<T *>(glob) + threadIdx.x : s + threadIdx.x;      \
    add;                                                                             \
    __syncthreads();                                                                 \
    out[256 + threadIdx.x] = *reinterpret_cast<unsigned *>(&s[threadIdx.x]);         \
    if (threadIdx.x == 0) out[blockIdx.x] = 1;                                       \
  }
K(ga_u32, unsigned, atomicAdd(p, 1u))
K(ga_f32, float, atomicAdd(p, 1.f))
K(ga_h2, __half2, atomicAdd(p, __floats2half2_rn(1.f, 2.f)))
K(ga_bf2, __nv_bfloat162, atomicAdd(p, __floats2bfloat162_rn(1.f, 2.f)))
typedef unsigned long long u64;
K(ga_u64, u64, atomicAdd(p, 1ull))
K(ga_f64, double, atomicAdd(p, 1.0))
K(ga_none, unsigned, (void)p)
