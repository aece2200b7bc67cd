// Probe lab 4: the project's own probe of the directed roundings to half precision. Thread i
// converts its value in[i] (i < n) to float16 and to bfloat16 with each rounding mode, by
// inline PTX, and writes the eight 16-bit results to out[8 * i ...]: rn, rz, rm, rp to f16,
// then rn, rz, rm, rp to bf16. cvt_f64 takes doubles (F2F.{F16,BF16}.F64{,.RZ,.RM,.RP}),
// cvt_f32 floats (.rn and .rz: F2FP.{F16,BF16}.F32.PACK_AB{,.RZ}; .rm and .rp:
// F2F.{F16,BF16}.F32.{RM,RP}). Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../probes4.sm_90.cubin probes4.cu
#define CVT(MODE, TO, FROM, C, R, X) asm("cvt." MODE "." TO "." FROM " %0, %1;" : "=h"(R) : C(X))
#define EIGHT(FROM, C, X)                   \
  unsigned short r[8];                      \
  CVT("rn", "f16", FROM, C, r[0], X);       \
  CVT("rz", "f16", FROM, C, r[1], X);       \
  CVT("rm", "f16", FROM, C, r[2], X);       \
  CVT("rp", "f16", FROM, C, r[3], X);       \
  CVT("rn", "bf16", FROM, C, r[4], X);      \
  CVT("rz", "bf16", FROM, C, r[5], X);      \
  CVT("rm", "bf16", FROM, C, r[6], X);      \
  CVT("rp", "bf16", FROM, C, r[7], X);      \
  for (int k = 0; k < 8; k++) out[8 * i + k] = r[k];

extern "C" __global__ void cvt_f64(unsigned short *out, const double *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = in[i];
  EIGHT("f64", "d", x)
}
extern "C" __global__ void cvt_f32(unsigned short *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = in[i];
  EIGHT("f32", "f", x)
}
