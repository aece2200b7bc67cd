// The project's own FlashAttention-2-style forward kernel (nothing here is upstream code): one CTA = 64 query rows of one (batch, head),
// 4 warps x 16 rows; Q tile in shared memory, K/V tiles of 64 rows double-buffered with
// cp.async.cg; S = Q K^T and O += P V with mma.sync m16n8k16 (fp16 in, fp32 acc); ldmatrix
// (.trans for V); online softmax; O staged through shared memory. Head dim 64.
// Shared tiles are 64 x 64 halves, rows of 128 B, 16-byte chunk c of row r stored at c ^ (r & 7).
#include <cuda_fp16.h>
#include <cstdint>

struct FwdParams {
  const half *q, *k, *v;
  half *o;
  int seqlen;     // keys per head
  int heads;
  long long stride_bh;  // elements between (batch, head) slices
  float scale_log2;     // softmax scale * log2(e)
  int causal;
};

constexpr int D = 64, BR = 64, BC = 64;

__device__ __forceinline__ uint32_t smem_u32(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ int swz(int row, int chunk) { return row * D + ((chunk ^ (row & 7)) << 3); }

__device__ __forceinline__ void load_tile(half *s, const half *g, int tid) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    int idx = tid + i * 128, row = idx >> 3, chunk = idx & 7;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(s + swz(row, chunk))),
                 "l"(g + row * D + chunk * 8));
  }
}
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const half *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t (&r)[4], const half *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(smem_u32(p)));
}
__device__ __forceinline__ void mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ uint32_t pack(float a, float b) {
  __half2 h = __floats2half2_rn(a, b);
  return *reinterpret_cast<uint32_t *>(&h);
}

__global__ void __launch_bounds__(128) fa2_forward(const __grid_constant__ FwdParams p) {
  __shared__ __align__(128) half sQ[BR * D];
  __shared__ __align__(128) half sK[2][BC * D];
  __shared__ __align__(128) half sV[2][BC * D];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const long long bh = (long long)blockIdx.y * p.heads + blockIdx.z;
  const half *q = p.q + bh * p.stride_bh + (long long)blockIdx.x * BR * D;
  const half *k = p.k + bh * p.stride_bh;
  const half *v = p.v + bh * p.stride_bh;
  half *o = p.o + bh * p.stride_bh + (long long)blockIdx.x * BR * D;

  load_tile(sQ, q, tid);
  load_tile(sK[0], k, tid);
  load_tile(sV[0], v, tid);
  asm volatile("cp.async.commit_group;\n");

  uint32_t qf[4][4];  // Q fragments, 4 k-steps of 16
  float acc[8][4] = {};
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  const int n_tiles = p.causal ? min(p.seqlen / BC, (int)blockIdx.x + 1) : p.seqlen / BC;
  for (int t = 0; t < n_tiles; ++t) {
    const int cur = t & 1;
    if (t + 1 < n_tiles) {
      load_tile(sK[cur ^ 1], k + (t + 1) * BC * D, tid);
      load_tile(sV[cur ^ 1], v + (t + 1) * BC * D, tid);
    }
    asm volatile("cp.async.commit_group;\n");
    asm volatile("cp.async.wait_group 1;\n");
    __syncthreads();
    if (t == 0) {
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)  // A: rows warp*16 + lane%16, chunk 2*ks + lane/16
        ldsm_x4(qf[ks], sQ + swz(warp * 16 + (lane & 15), 2 * ks + (lane >> 4)));
    }
    // S = Q K^T: 16 x 64 per warp
    float s[8][4] = {};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
#pragma unroll
      for (int half_d = 0; half_d < 2; ++half_d) {  // matrices: d chunks 4*half_d + lane/8
        uint32_t kb[4];
        ldsm_x4(kb, sK[cur] + swz(j * 8 + (lane & 7), 4 * half_d + (lane >> 3)));
        mma16816(s[j], qf[2 * half_d], kb[0], kb[1]);
        mma16816(s[j], qf[2 * half_d + 1], kb[2], kb[3]);
      }
    }
    if (p.causal && t == (int)blockIdx.x) {  // the diagonal tile: keys past the query masked
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          int qrow = warp * 16 + (lane >> 2) + 8 * (e >> 1), kcol = j * 8 + 2 * (lane & 3) + (e & 1);
          if (kcol > qrow) s[j][e] = -INFINITY;
        }
    }
    // online softmax on rows lane/4 and lane/4 + 8
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = m[h];
#pragma unroll
      for (int j = 0; j < 8; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * h], s[j][2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, 2));
      const float corr = exp2f((m[h] - mx) * p.scale_log2);
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        s[j][2 * h] = exp2f((s[j][2 * h] - mx) * p.scale_log2);
        s[j][2 * h + 1] = exp2f((s[j][2 * h + 1] - mx) * p.scale_log2);
        sum += s[j][2 * h] + s[j][2 * h + 1];
        acc[j][2 * h] *= corr;
        acc[j][2 * h + 1] *= corr;
      }
      l[h] = l[h] * corr + sum;
      m[h] = mx;
    }
    // O += P V: P's C fragments are A fragments (k = key index)
#pragma unroll
    for (int ks = 0; ks < 4; ++ks) {
      uint32_t pa[4] = {pack(s[2 * ks][0], s[2 * ks][1]), pack(s[2 * ks][2], s[2 * ks][3]),
                        pack(s[2 * ks + 1][0], s[2 * ks + 1][1]), pack(s[2 * ks + 1][2], s[2 * ks + 1][3])};
#pragma unroll
      for (int dp = 0; dp < 4; ++dp) {  // d chunks 2*dp, 2*dp+1; key rows ks*16 + (lane/8 % 2)*8 + lane%8
        uint32_t vb[4];
        ldsm_x4_t(vb, sV[cur] + swz(ks * 16 + ((lane >> 3) & 1) * 8 + (lane & 7), 2 * dp + (lane >> 4)));
        mma16816(acc[2 * dp], pa, vb[0], vb[1]);
        mma16816(acc[2 * dp + 1], pa, vb[2], vb[3]);
      }
    }
    __syncthreads();
  }
  // normalise, stage O in sQ (half2 stores), then 16-byte rows out
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float sum = l[h];
    sum += __shfl_xor_sync(0xffffffff, sum, 1);
    sum += __shfl_xor_sync(0xffffffff, sum, 2);
    const float inv = 1.f / sum;
    const int row = warp * 16 + (lane >> 2) + 8 * h;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      *reinterpret_cast<uint32_t *>(sQ + swz(row, j) + 2 * (lane & 3)) =
          pack(acc[j][2 * h] * inv, acc[j][2 * h + 1] * inv);
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    int idx = tid + i * 128, row = idx >> 3, chunk = idx & 7;
    *reinterpret_cast<uint4 *>(o + row * D + chunk * 8) = *reinterpret_cast<const uint4 *>(sQ + swz(row, chunk));
  }
}
