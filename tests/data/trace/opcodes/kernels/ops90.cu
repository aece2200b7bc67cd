// Issue 26: kernels that make nvcc (CUDA 13.0, sm_90) emit the opcodes the emulator registers
// and no other kept kernel runs; each writes what it computed, so a test can compare every
// value with the same computation written out in NumPy. The project's own code.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../ops90.sm_90.cubin ops90.cu
#include <cuda_fp16.h>
#include <cstdint>

// FSET (a float compare written as 1.0f / 0.0f), LDL/STL (a local array with a computed
// index), NANOSLEEP
extern "C" __global__ void float_set_local(float *out, int *iout, const float *in, float s) {
  int t = threadIdx.x;
  float v = in[t];
  out[t] = (v > s) ? 1.f : 0.f;
  int buf[64];
#pragma unroll 1
  for (int i = 0; i < 64; ++i) buf[i] = (int)in[(t + i) & 63] * i;
  __nanosleep(32);
  iout[t] = buf[(int)in[t] & 63] + buf[(t * 5) & 63];
}

// HMUL2, HMNMX2 (max, min), HSETP2 (half compares deciding branches)
extern "C" __global__ void half_ops(__half2 *out, int *flags, const __half2 *in, const __half *a,
                                    const __half *b) {
  int t = threadIdx.x;
  __half2 v = in[t], w = in[t + 32];
  out[t] = __hmul2(v, w);
  out[t + 32] = __hmax2(v, w);
  out[t + 64] = __hmin2(v, w);
  out[t + 96] = __hmul2_sat(v, w);
  int r = 0;
  if (__hgt(a[t], b[t])) r |= 1;
  if (__hlt(a[t], b[t])) r |= 2;
  if (__heq(a[t], b[t])) r |= 4;
  flags[t] = r;
}

// I2I (saturating narrowing), I2IP (saturating packs)
extern "C" __global__ void int_narrow(int *out, const int *in) {
  int t = threadIdx.x, v = in[t], w = in[t + 32], r;
  asm("cvt.sat.s8.s32 %0, %1;" : "=r"(r) : "r"(v));
  out[t] = r;
  asm("cvt.sat.u16.s32 %0, %1;" : "=r"(r) : "r"(v));
  out[t + 32] = r;
  asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(v), "r"(w), "r"(0x11223344));
  out[t + 64] = r;
  asm("cvt.pack.sat.u16.s32 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(w));
  out[t + 96] = r;
}

// PMTRIG (a profiler trigger), ERRBAR and CGAERRBAR (fence.sc), BPT under a flag
extern "C" __global__ void fences(int *out, int n) {
  __prof_trigger(3);
  asm volatile("fence.sc.gpu;" ::: "memory");
  if (n == 7) __brkpt();
  out[threadIdx.x] = n + (int)threadIdx.x;
}

// VIADDMNMX: an add then a minimum or maximum in one instruction (sm_90), signed and
// unsigned, with .RELU, as a causal mask's column limit computes min(row + k, n)
extern "C" __global__ void add_min_max(int *out, const int *in, int k) {
  int t = threadIdx.x, a = in[t], c = in[t + 32];
  unsigned ua = (unsigned)a, uc = (unsigned)c;
  out[t] = __viaddmin_s32(a, k, c);
  out[t + 32] = __viaddmax_s32(a, k, c);
  out[t + 64] = (int)__viaddmin_u32(ua, (unsigned)k, uc);
  out[t + 96] = (int)__viaddmax_u32(ua, (unsigned)k, uc);
  out[t + 128] = __viaddmax_s32_relu(a, k, c);
  out[t + 160] = __viaddmin_s32_relu(a, k, c);
  out[t + 192] = min(a + 8, c);  // what the compiler itself fuses
}
