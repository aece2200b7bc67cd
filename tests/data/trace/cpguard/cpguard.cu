// shmem's own kernel: a two-stage cp.async pipeline written as Triton lowers one. Each copy is
// a 16-byte cp.async.cg whose src-size is 16 or 0 by a condition the whole block shares (the
// tile exists or not), so ptxas writes LDGSTS.E.BYPASS.128 [..], [..], P0: no guard, the
// trailing predicate says whether the lanes read their source or write zeros. The prologue's
// copy loads tile 0 when tiles > 0; the loop's copy prefetches tile i + 1, past the end (all
// zero fill) in the last turn. One block of 128 threads.
#include <cstdint>

__device__ __forceinline__ void copy16(void *dst, const void *src, unsigned src_size) {
  unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src),
               "r"(src_size)
               : "memory");
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

extern "C" __global__ void cp_guard(unsigned *out, const uint4 *in, int tiles) {
  __shared__ __align__(128) uint4 buf[2][128];
  unsigned t = threadIdx.x;
  copy16(&buf[0][t], in + t, tiles > 0 ? 16 : 0);
  unsigned acc = 0;
#pragma unroll 1
  for (int i = 0; i < tiles; ++i) {
    copy16(&buf[(i + 1) & 1][t], in + (i + 1) * 128 + t, i + 1 < tiles ? 16 : 0);
    asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    __syncthreads();
    acc += buf[i & 1][t].x;
    __syncthreads();
  }
  out[t] = acc;
}
