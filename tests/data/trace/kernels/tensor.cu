// shmem's own trace test kernels: ldmatrix / stmatrix / mma.sync and cp.async (sm_80+, stmatrix sm_90).
#include <cstdint>
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// One warp: a 16x16 half tile, ldmatrix.x4 (rows of 16 bytes) with row stride ROW halves,
// optionally XOR-swizzled, then mma.sync m16n8k16 with itself.
template <int ROW, bool SWIZZLE>
__global__ void ldmatrix_mma(float *out, const half *in) {
  __shared__ __align__(128) half tile[16 * ROW];
  unsigned lane = threadIdx.x;
  for (unsigned i = lane; i < 16 * 16; i += 32) {
    unsigned r = i / 16, c = i % 16;
    unsigned chunk = c / 8;
    if (SWIZZLE) chunk ^= (r / 4) & 1;
    tile[r * ROW + chunk * 8 + c % 8] = in[i];
  }
  __syncwarp();
  unsigned r = lane % 16, chunk = lane / 16;
  if (SWIZZLE) chunk ^= (r / 4) & 1;
  unsigned a0, a1, a2, a3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
               : "r"(smem_addr(&tile[r * ROW + chunk * 8])));
  unsigned b0, b1;
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(b0), "=r"(b1)
               : "r"(smem_addr(&tile[(lane % 16) * ROW])));
  unsigned c0;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
               : "=r"(c0)
               : "r"(smem_addr(&tile[(lane % 8) * ROW + 8])));
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  out[lane * 5 + 0] = d0;
  out[lane * 5 + 1] = d1;
  out[lane * 5 + 2] = d2;
  out[lane * 5 + 3] = d3;
  out[lane * 5 + 4] = __uint_as_float(c0);
}
template __global__ void ldmatrix_mma<16, false>(float *, const half *);
template __global__ void ldmatrix_mma<16, true>(float *, const half *);
template __global__ void ldmatrix_mma<24, false>(float *, const half *);
template __global__ void ldmatrix_mma<64, false>(float *, const half *);

// Two warps: stmatrix.x4 (and .trans x2) of registers into a tile with row stride ROW halves.
template <int ROW>
__global__ void stmatrix_store(half *out, const unsigned *in) {
  __shared__ __align__(128) half tile[2][16 * ROW];
  unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned r0 = in[threadIdx.x * 4], r1 = in[threadIdx.x * 4 + 1];
  unsigned r2 = in[threadIdx.x * 4 + 2], r3 = in[threadIdx.x * 4 + 3];
  unsigned r = lane % 16, chunk = lane / 16;
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n"
               :
               : "r"(smem_addr(&tile[warp][r * ROW + chunk * 8])), "r"(r0), "r"(r1), "r"(r2),
                 "r"(r3)
               : "memory");
  __syncwarp();
  for (unsigned i = lane; i < 16 * 16; i += 32) out[warp * 256 + i] = tile[warp][(i / 16) * ROW + i % 16];
  __syncwarp();
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1,%2};\n"
               :
               : "r"(smem_addr(&tile[warp][(lane % 16) * ROW])), "r"(r0), "r"(r1)
               : "memory");
  __syncwarp();
  for (unsigned i = lane; i < 16 * 16; i += 32)
    out[512 + warp * 256 + i] = tile[warp][(i / 16) * ROW + i % 16];
}
template __global__ void stmatrix_store<16>(half *, const unsigned *);
template __global__ void stmatrix_store<24>(half *, const unsigned *);

// 64 threads: cp.async global -> shared of BYTES per thread into slot (tid * STRIDE) of a word array;
// then each thread reads its slot back. STRIDE is in units of BYTES.
template <int BYTES, int STRIDE>
__global__ void cp_async_copy(unsigned *out, const unsigned *in) {
  constexpr int WORDS = BYTES / 4;
  __shared__ __align__(128) unsigned buf[WORDS * STRIDE * 64 + 64];
  unsigned tid = threadIdx.x;
  unsigned *dst = &buf[tid * STRIDE * WORDS];
  const unsigned *src = &in[tid * WORDS];
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "n"(BYTES)
               : "memory");
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  __syncthreads();
  unsigned acc = 0;
  for (int w = 0; w < WORDS; ++w) acc += dst[w];
  out[tid] = acc;
}
template __global__ void cp_async_copy<4, 1>(unsigned *, const unsigned *);
template __global__ void cp_async_copy<4, 129>(unsigned *, const unsigned *);
template __global__ void cp_async_copy<4, 32>(unsigned *, const unsigned *);
template __global__ void cp_async_copy<8, 1>(unsigned *, const unsigned *);
template __global__ void cp_async_copy<8, 16>(unsigned *, const unsigned *);
template __global__ void cp_async_copy<16, 1>(unsigned *, const unsigned *);
template __global__ void cp_async_copy<16, 2>(unsigned *, const unsigned *);
template __global__ void cp_async_copy<16, 8>(unsigned *, const unsigned *);

// cp.async.cg 16 bytes into a 64-half-wide tile with an XOR swizzle (the CuTe-style pattern),
// a two-stage pipeline over K tiles, partial (src-size) copies on the last row.
__global__ void cp_async_pipeline(float *out, const half *in, int tiles) {
  __shared__ __align__(128) half stage[2][32 * 64];
  unsigned tid = threadIdx.x;  // 128 threads: each copies 2 chunks of 8 halves per tile
  auto issue = [&](int t, int s) {
    for (int c = 0; c < 2; ++c) {
      unsigned chunk = tid * 2 + c;          // 256 chunks of 16 bytes = 32 rows x 8 chunks
      unsigned row = chunk / 8, col = chunk % 8;
      unsigned scol = col ^ (row % 8);
      const half *src = in + (size_t)t * 32 * 64 + row * 64 + col * 8;
      unsigned bytes = row == 31 ? 8 : 16;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                       smem_addr(&stage[s][row * 64 + scol * 8])),
                   "l"(src), "r"(bytes)
                   : "memory");
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  };
  float acc = 0.f;
  issue(0, 0);
  for (int t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) {
      issue(t + 1, (t + 1) % 2);
      asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    }
    __syncthreads();
    unsigned row = tid % 32, col = (tid / 32) * 2;
    acc += __half2float(stage[t % 2][row * 64 + ((col ^ (row % 8)) * 8)]);
    __syncthreads();
  }
  out[tid] = acc;
}
