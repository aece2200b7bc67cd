// shmem trace emulator test (sm_90a): a bulk copy (cp.async.bulk, UBLKCP) completed through
// an mbarrier (SYNCS), whose traffic is listed as not modelled; the LDS after it is traced.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90a -o ../emu_bulk_sm90a.cubin emu_bulk.cu
#include <cstdint>
__global__ void emu_bulk(const float *g, float *o) {
  __shared__ __align__(128) float s[256];
  __shared__ __align__(8) uint64_t bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned d = (unsigned)__cvta_generic_to_shared(s);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(b), "r"(1));
    asm volatile("fence.proxy.async.shared::cta;");
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(b), "r"(1024));
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
        ::"r"(d), "l"(g), "r"(1024), "r"(b) : "memory");
  }
  __syncthreads();
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
        : "=r"(done) : "r"(b), "r"(0));
  }
  o[threadIdx.x] = s[threadIdx.x ^ 1];
}
