// The arrive forms of mbarrier PTX that set or complete transaction bytes or arrive more
// than once, each driving its barrier through more phases than it expects arrivals, the way
// a warp-specialized GEMM's epilogue pipeline drives its barriers (one expect_tx, then the
// producer warp's arrivals) tile after tile. Each completed phase is logged by a shared
// store of warp 0, so a wrong count of arrivals shows as a deadlock or a missing store.
//
//   form 0: expect_tx (SYNCS.ARRIVE.TRANS64.RED.A0TR), complete_tx (.RED.A0TX) and one
//           arrival without state (.RED.A1T0) on a barrier of 1 arrival, every round
//   form 1: an arrival of a count from a register (.ART0) on a barrier of 3 arrivals
//   form 2: arrive_drop (.OPTOUT.A1T0) by warp 1 in round 0 on a barrier of 2 arrivals:
//           from round 1 on, warp 0's one arrival completes each phase
//
// nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a (build.sh)
#include <cstdint>

__device__ __forceinline__ uint32_t smem(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void wait_parity(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred P;\nWAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\n"
      "@!P bra WAIT;\n}\n" ::"r"(bar), "r"(parity) : "memory");
}

// out[0] = rounds completed by warp 0, out[1 + lane] = the last round lane logged
__global__ void mbarrier_forms(int *out, int form, int rounds, int tx, int count) {
  __shared__ alignas(8) uint64_t bar;
  __shared__ int log[64];
  const uint32_t b = smem(&bar);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int expected = form == 0 ? 1 : form == 1 ? count : 2;
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(expected) : "memory");
  __syncthreads();
  if (warp == 1) {
    if (form == 2 && lane == 0) asm volatile("mbarrier.arrive_drop.shared::cta.b64 _, [%0];" ::"r"(b) : "memory");
    return;
  }
  for (int r = 0; r < rounds; ++r) {
    if (lane == 0) {
      if (form == 0) {
        asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(tx) : "memory");
        asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(tx) : "memory");
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(b) : "memory");
      } else if (form == 1) {
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(count) : "memory");
      } else {
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(b) : "memory");
      }
    }
    wait_parity(b, r & 1);
    log[lane + 32 * (r & 1)] = r;
  }
  __syncwarp();
  if (lane == 0) out[0] = rounds;
  out[1 + lane] = log[lane + 32 * ((rounds - 1) & 1)];
}
