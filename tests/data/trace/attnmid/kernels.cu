// The project's own kernels for what tests/data/trace/attnorder left open (README.md): a
// shuffle between the wgmma of the O += P V group costs the CTA 1 an iteration beyond the
// rule (o_mid, o_mid_nobar, o_mid_quiet), 2 with two warpgroups in Triton's cp.async loop
// (o_mid_cp8), but none with one (o_mid_cp, the same SASS). Build: ./build.sh. Nothing here
// is upstream code.
//
// attnorder's kernels come along unchanged (the same SASS: the controls o_mid, o_mid_quiet,
// o_mid_cp and o_mid_cp8 are counted again in the same session), with its helpers.
#include "../attnorder/kernels.cu"

// the row sum through N shuffles (lanes 2^(N-1), ..., 2, 1)
template <int N>
__device__ __forceinline__ float rowsum_n(float l) {
  for (int k = N - 1; k >= 0; --k) l += bfly(l, 1 << k);
  return l;
}

// spin on the SM clock for n cycles (CS2R SR_CLOCKLO and arithmetic: no op_misc, stirs nothing)
__device__ __forceinline__ void spin(int n) {
  long long t0 = clock64();
  while (clock64() - t0 < n) {
  }
}

// attnorder's loop (the row maximum's two shuffles before the P V arrive, the group of two
// wgmma left running across a barrier and the loop's end) with the row sum's N shuffles
// written between the group's two wgmma, where ptxas places them by its own schedule (each
// kernel's README row gives the SASS it made); CP: Triton's cp.async prefetch and top barrier
// (attnorder's CP); SPIN: the warps spin that many cycles between the group's last wgmma and
// the barrier after it; KEEP: the sum stored to shared memory before that barrier (so its
// shuffles are waited for there); STS: a 4-byte shared store between the group's wgmma.
template <int N, bool CP, int SPIN = 0, bool KEEP = false, bool STS = false>
__device__ __forceinline__ void group_work(float *out, int iters) {
  zero_tiles();
  float o[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  float l = 0;
  unsigned spare = (unsigned)__cvta_generic_to_shared(tiles) + 4096 + 16 * (threadIdx.x & 255);
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
    float s[8];
    if (CP) {
      asm volatile("cp.async.wait_all;" ::: "memory");
      __syncthreads();
    }
    wg_fence();
    mma_ss(s, desc(0), desc(2048));
    wg_commit();
    wg_wait0();
    float m = fmaxf(s[0], s[1]);
    m = fmaxf(m, bfly(m, 2));
    m = fmaxf(m, bfly(m, 1));
    float e = 0;
    for (int i = 0; i < 8; ++i) e += s[i] * 0.75f;
    uint32_t p[8];
    for (int i = 0; i < 4; ++i) {
      p[i] = pack(s[2 * i] - m, s[2 * i + 1] - m);
      p[4 + i] = pack(s[2 * i + 1] - m, s[2 * i] - m);
    }
    wg_fence();
    mma_rs(o, p, desc(2560));
    if (STS) asm volatile("st.shared.f32 [%0], %1;" ::"r"(spare), "f"(e) : "memory");
    e = rowsum_n<N>(e);
    mma_rs(o, p + 4, desc(3072));
    wg_commit();
    if (SPIN) spin(SPIN);
    if (KEEP) asm volatile("st.shared.f32 [%0], %1;" ::"r"(spare + 8), "f"(e) : "memory");
    __syncthreads();
    l = l * 0.5f + e;
    if (CP) {
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(spare), "l"(out + 4 * threadIdx.x)
                   : "memory");
      asm volatile("cp.async.commit_group;" ::: "memory");
    }
  }
  wg_wait0();
  for (int i = 0; i < 8; ++i) out[i * blockDim.x + threadIdx.x] = o[i] + l;
}

#define GROUP(name, threads, ...)                                                        \
  extern "C" __global__ void __launch_bounds__(threads, 1) name(float *out, int iters) { \
    group_work<__VA_ARGS__>(out, iters);                                                 \
  }
// per warpgroup or per CTA: attnorder's o_mid and o_mid_quiet with two warpgroups
ATTN(o_mid8, 256, true, MID, true)
ATTN(o_mid_quiet8, 256, false, MID, true)
// one shuffle between the wgmma, none in flight at the arrive or the first wgmma
GROUP(m_mid1, 128, 1, false)
// three: two between the wgmma, the first before the arrive
GROUP(m_mid3, 128, 3, false)
// no shuffle in the group: a shared store between the wgmma instead
GROUP(m_sts, 128, 0, false, 0, false, true)
// Triton's cp.async loop with o_mid's group (its second shuffle waited for before the
// barrier, a store of the sum before it), and with o_mid_cp's group and a 2,000-cycle spin
// before the barrier
GROUP(m_cp_kept, 128, 2, true, 0, true)
GROUP(m_cp_spin, 128, 2, true, 2000)
