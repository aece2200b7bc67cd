// Hopper lab (sm_90a): a warp-specialized GEMM mainloop, C[128x128] = A[128xK] * B[128xK]^T in
// bf16 with f32 accumulators. Warpgroup 0 produces: one elected thread loads 128x64 tiles of A
// and B by TMA (128B swizzle) into STAGES shared stages, each completing on its `full`
// mbarrier; warpgroups 1 and 2 consume: each waits for a stage, runs 4 wgmma m64n128k16 on its
// 64 rows (K-major descriptors, 32 B steps), and arrives on the stage's `empty` mbarrier. The
// epilogue writes the accumulators as bf16 with stmatrix and stores C by TMA.
// Build: nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o ../ws_gemm.sm_90a.cubin ws_gemm.cu
#include <cuda.h>
#include <cuda_bf16.h>
#include <cstdint>

#define BM 128
#define BN 128
#define BK 64
#define STAGES 4
#define TILE_BYTES (BM * BK * 2)

struct Smem {
  __nv_bfloat16 a[STAGES][BM * BK];
  __nv_bfloat16 b[STAGES][BN * BK];
  __nv_bfloat16 c[BM * BN];
  uint64_t full[STAGES], empty[STAGES];
};

__device__ __forceinline__ unsigned sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1; @!p bra W; }"
      ::"r"(bar), "r"(parity) : "memory");
}

__device__ __forceinline__ uint64_t kdesc(unsigned addr) {
  // K-major, 128B swizzle: 8-row groups 1024 B apart
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)1 << 16) | ((uint64_t)(1024 >> 4) << 32) |
         ((uint64_t)1 << 62);
}

__device__ __forceinline__ void mma(float (&d)[64], uint64_t a, uint64_t b) {
  asm volatile(
      "{ .reg .pred p; setp.ne.b32 p, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"
      "%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,"
      "%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, %64, %65, p, 1, "
      "1, 0, 0; }"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
        "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),
        "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),
        "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
        "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
        "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),
        "+f"(d[62]), "+f"(d[63])
      : "l"(a), "l"(b)
      : "memory");
}

__device__ __forceinline__ unsigned pack(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *(unsigned *)&v;
}

extern "C" __global__ void __launch_bounds__(384, 1)
    ws_gemm(const __grid_constant__ CUtensorMap ta, const __grid_constant__ CUtensorMap tb,
            const __grid_constant__ CUtensorMap tc, int k_tiles) {
  extern __shared__ __align__(1024) unsigned char raw[];
  Smem &s = *(Smem *)raw;
  int wg = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int i = 0; i < STAGES; ++i) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&s.full[i])) : "memory");
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 256;" ::"r"(sa(&s.empty[i])) : "memory");
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        int st = kt % STAGES;
        wait(sa(&s.empty[st]), ((kt / STAGES) & 1) ^ 1);
        unsigned full = sa(&s.full[st]);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(full),
                     "r"(2 * TILE_BYTES) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];" ::"r"(sa(s.a[st])), "l"(&ta), "r"(kt * BK), "r"(0),
            "r"(full) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %3}], [%4];" ::"r"(sa(s.b[st])), "l"(&tb), "r"(kt * BK), "r"(0),
            "r"(full) : "memory");
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    int row0 = (wg - 1) * 64;
    float d[64];
    for (int i = 0; i < 64; ++i) d[i] = 0.f;
    for (int kt = 0; kt < k_tiles; ++kt) {
      int st = kt % STAGES;
      wait(sa(&s.full[st]), (kt / STAGES) & 1);
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      unsigned a0 = sa(s.a[st] + row0 * BK), b0 = sa(s.b[st]);
#pragma unroll
      for (int k = 0; k < BK / 16; ++k) mma(d, kdesc(a0 + 32 * k), kdesc(b0 + 32 * k));
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(&s.empty[st])) : "memory");
    }
    // epilogue: stmatrix x4 per 16 columns; rows 16 w .. 16 w + 15 of this warpgroup's 64
    int lane = threadIdx.x & 31, w = (threadIdx.x / 32) & 3;
    for (int q = 0; q < BN / 16; ++q) {
      int row = row0 + 16 * w + (lane & 7) + 8 * ((lane >> 3) & 1);
      int col = 16 * q + 8 * (lane >> 4);
      unsigned addr = sa(&s.c[row * BN + col]);
      asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
                   ::"r"(addr), "r"(pack(d[8 * q], d[8 * q + 1])), "r"(pack(d[8 * q + 2], d[8 * q + 3])),
                   "r"(pack(d[8 * q + 4], d[8 * q + 5])), "r"(pack(d[8 * q + 6], d[8 * q + 7]))
                   : "memory");
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("bar.sync 1, 256;" ::: "memory");
    if (threadIdx.x == 128) {
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];"
                   ::"l"(&tc), "r"(0), "r"(0), "r"(sa(s.c)) : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
  }
}
