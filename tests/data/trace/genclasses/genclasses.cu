// shmem's own kernels (no GPU run: the emulator's check of itself): a generic atomic through
// a pointer to shared or global memory (`where`, one for the whole launch) that each thread
// runs 1 + blockIdx.x % 3 times, so the blocks fall into three classes (issue 30) whose
// blocks run side by side with that atomic's op_atom wavefronts kept per block
// (docs/hardware-model.md 9e: on global memory 1 a warp, a float add declined on shared
// memory 1 a warp beside its loop). tests/test_trace_genatom.py traces them by class and
// with every block run.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o genclasses.sm_90.cubin genclasses.cu
#define K(name, T, v)                                                                \
  extern "C" __global__ void name(unsigned *out, T *glob, int where) {             \
    __shared__ T s[256];                                                           \
    s[threadIdx.x] = T{};                                                          \
    __syncthreads();                                                               \
    T *p = where ? glob + threadIdx.x : s + threadIdx.x;                           \
    for (unsigned i = 0; i <= blockIdx.x % 3; ++i) atomicAdd(p, v);                \
    __syncthreads();                                                               \
    if (threadIdx.x == 0) out[blockIdx.x] = *reinterpret_cast<unsigned *>(&s[1]);  \
  }
K(gc_u32, unsigned, 1u)
K(gc_f32, float, 1.f)
