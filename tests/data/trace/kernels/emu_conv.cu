// shmem trace emulator test: conversions, rounding, doubles, byte permutes, funnel shifts,
// min/max and high multiplies, each thread on its own inputs.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../emu_conv_sm90.cubin emu_conv.cu
#include <cstdint>
__global__ void emu_conv(const float *xf, const int *xi, const double *xd, unsigned *out) {
  unsigned t = threadIdx.x;
  float f = xf[t];
  int i = xi[t];
  double d = xd[t];
  unsigned *o = out + t * 24;
  o[0] = __float2int_rd(f);
  o[1] = __float2int_ru(f);
  o[2] = __float2int_rn(f);
  o[3] = (int)f;
  o[4] = __float_as_uint(floorf(f));
  o[5] = __float_as_uint(ceilf(f));
  o[6] = __float_as_uint(truncf(f));
  o[7] = __float_as_uint(rintf(f));
  o[8] = (unsigned)(int)(signed char)i;
  o[9] = (unsigned)(int)(short)(i >> 3);
  o[10] = __byte_perm((unsigned)i, 0x12345678u, t & 0x7777u);
  o[11] = __funnelshift_l((unsigned)i, 0xdeadbeefu, t);
  o[12] = __funnelshift_r((unsigned)i, 0xdeadbeefu, t);
  o[13] = (unsigned)max(i, (int)(t * 1000) - 50000);
  o[14] = min((unsigned)i, t * 77777u);
  o[15] = __umulhi((unsigned)i, 0x9e3779b9u);
  long long m = __mul64hi((long long)i * 12345, -987654321987LL);
  o[16] = (unsigned)m;
  o[17] = (unsigned)(m >> 32);
  double e = d * 1.5 + (double)i;
  e = fma(e, d, -3.25);
  o[18] = (unsigned)(__double_as_longlong(e));
  o[19] = (unsigned)(__double_as_longlong(e) >> 32);
  o[20] = __float_as_uint((float)e);
  o[21] = (d < (double)f) ? 1u : 0u;
  o[22] = __float_as_uint((float)(long long)(f * 1e6f));
  o[23] = (unsigned)(long long)d;
}
