// Floats converted with cvt's .satfinite (and .relu, .rz) to bf16, f16, e4m3/e5m2 and, with
// .rn/.rz/.relu, to tf32: the F2FP forms ptxas (CUDA 13.0) emits for them, as CUTLASS's
// epilogues with saturation convert their results (F2FP.SATFINITE.BF16.F32.PACK_AB, ...).
// Thread i converts (a, b) = (in[2i], in[2i+1]) and writes WORDS words to out[WORDS*i + k]:
//   0-7  pairs  cvt.{rn,rz}.satfinite{,.relu}.{bf16x2,f16x2}.f32 d, a, b  (PACK_AB)
//   8-11 scalars {bf16(a), f16(b)}: .rn.satfinite, .rz.satfinite, .rn.satfinite.relu,
//        .rn.relu (MERGE_C, one value each)
//   12-13 fp8 {e4m3x2(a, b), e5m2x2(a, b)}: cvt.rn.satfinite{,.relu} (sm_89 and later;
//        0 on sm_80)
//   14-19 tf32 of a and of b: cvt.rn, cvt.rz, cvt.rn.relu / cvt.rz.relu (TF32.F32.PACK_B,
//        sm_90 and later; 0 on sm_80)
//
// build.sh: nvcc -cubin -lineinfo -O3 for sm_90a (the one the lab runs) and sm_80
#define WORDS 20

__device__ __forceinline__ unsigned halves(unsigned short lo, unsigned short hi) {
  unsigned r;
  asm("mov.b32 %0, {%1, %2};" : "=r"(r) : "h"(lo), "h"(hi));
  return r;
}

#define PAIR(ptx, k) asm(ptx " %0, %1, %2;" : "=r"(w[k]) : "f"(a), "f"(b))
#define ONE(ptx, x, s) asm(ptx " %0, %1;" : "=h"(s) : "f"(x))
#define TF32(ptx, x, k) asm(ptx " %0, %1;" : "=r"(w[k]) : "f"(x))

__global__ void f2fp_sat(const float *in, unsigned *out) {
  const int i = threadIdx.x;
  const float a = in[2 * i], b = in[2 * i + 1];
  unsigned w[WORDS];
  unsigned short s, t;
  PAIR("cvt.rn.satfinite.bf16x2.f32", 0);
  PAIR("cvt.rn.satfinite.f16x2.f32", 1);
  PAIR("cvt.rz.satfinite.bf16x2.f32", 2);
  PAIR("cvt.rz.satfinite.f16x2.f32", 3);
  PAIR("cvt.rn.satfinite.relu.bf16x2.f32", 4);
  PAIR("cvt.rn.satfinite.relu.f16x2.f32", 5);
  PAIR("cvt.rz.satfinite.relu.bf16x2.f32", 6);
  PAIR("cvt.rz.satfinite.relu.f16x2.f32", 7);
  ONE("cvt.rn.satfinite.bf16.f32", a, s);
  ONE("cvt.rn.satfinite.f16.f32", b, t);
  w[8] = halves(s, t);
  ONE("cvt.rz.satfinite.bf16.f32", a, s);
  ONE("cvt.rz.satfinite.f16.f32", b, t);
  w[9] = halves(s, t);
  ONE("cvt.rn.satfinite.relu.bf16.f32", a, s);
  ONE("cvt.rn.satfinite.relu.f16.f32", b, t);
  w[10] = halves(s, t);
  ONE("cvt.rn.relu.bf16.f32", a, s);
  ONE("cvt.rn.relu.f16.f32", b, t);
  w[11] = halves(s, t);
#if __CUDA_ARCH__ >= 890
  unsigned e4, e5;
  asm("{.reg .b16 t; cvt.rn.satfinite.e4m3x2.f32 t, %1, %2; cvt.u32.u16 %0, t;}" : "=r"(e4) : "f"(a), "f"(b));
  asm("{.reg .b16 t; cvt.rn.satfinite.e5m2x2.f32 t, %1, %2; cvt.u32.u16 %0, t;}" : "=r"(e5) : "f"(a), "f"(b));
  w[12] = e4 | (e5 << 16);
  asm("{.reg .b16 t; cvt.rn.satfinite.relu.e4m3x2.f32 t, %1, %2; cvt.u32.u16 %0, t;}" : "=r"(e4) : "f"(a), "f"(b));
  asm("{.reg .b16 t; cvt.rn.satfinite.relu.e5m2x2.f32 t, %1, %2; cvt.u32.u16 %0, t;}" : "=r"(e5) : "f"(a), "f"(b));
  w[13] = e4 | (e5 << 16);
#else
  w[12] = w[13] = 0;
#endif
#if __CUDA_ARCH__ >= 900
  TF32("cvt.rn.tf32.f32", a, 14);
  TF32("cvt.rn.tf32.f32", b, 15);
  TF32("cvt.rz.tf32.f32", a, 16);
  TF32("cvt.rz.tf32.f32", b, 17);
  TF32("cvt.rn.relu.tf32.f32", a, 18);
  TF32("cvt.rz.relu.tf32.f32", b, 19);
#else
  w[14] = w[15] = w[16] = w[17] = w[18] = w[19] = 0;
#endif
#pragma unroll
  for (int k = 0; k < WORDS; ++k) out[WORDS * i + k] = w[k];
}
