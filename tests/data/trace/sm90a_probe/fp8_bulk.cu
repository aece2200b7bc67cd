// cuda_fp8.h beside code that only the sm_90a build has: its bulk copy is compiled where
// __CUDA_ARCH_FEAT_SM90_ALL is defined, and the sm_90 build traps instead (as CuTe's do), so
// shmem trace builds both and traces the sm_90a one (tests/test_trace_sm90a_probe.py).
#include <cuda_fp8.h>

__global__ void fp8_bulk(const __nv_fp8_e4m3 *in, float *out) {
  __shared__ __align__(16) float t[128];
  t[threadIdx.x] = float(in[threadIdx.x]);
  __syncthreads();
#ifdef __CUDA_ARCH_FEAT_SM90_ALL
  if (threadIdx.x == 0) {
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(t));
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 512;\n"
                 "cp.async.bulk.commit_group;\n"
                 "cp.async.bulk.wait_group 0;\n" ::"l"(out), "r"(s) : "memory");
  }
#else
  __trap();
#endif
}
