// Issues 29/30, the second H200 round: 64-bit and float atomics on global memory as CUDA
// code writes them (the old value used or not), and double fmin/fmax on NaNs that differ in
// their payload (which of two NaNs the result carries). The project's own code.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../cuda90b.sm_90.cubin cuda90b.cu
#include <cstdint>

// 128 threads. Sums of exactly representable values (the same whatever the order); the
// atomics whose old value is used each go to an address of their own
extern "C" __global__ void atomics_wide(double *dsum, float *fsum, unsigned long long *u64,
                                        long long *s64, double *dold, unsigned long long *uold,
                                        const double *dv, const long long *lv) {
  int t = threadIdx.x;
  double d = dv[t];
  long long l = lv[t];
  atomicAdd(&dsum[t & 3], d);                       // the old value unused
  atomicAdd(&fsum[t & 3], (float)(t & 15) * 0.25f);
  atomicAdd(&u64[0], (unsigned long long)l);
  atomicMax(&u64[1], (unsigned long long)l);
  atomicMin(&u64[2], (unsigned long long)l);
  atomicMax(&s64[0], l);
  atomicMin(&s64[1], l);
  atomicAnd(&u64[3], (unsigned long long)l | 0xF0F0ull);
  atomicOr(&u64[4], (unsigned long long)l & 0x0F0F0F0Full);
  atomicXor(&u64[5], (unsigned long long)l);
  dold[t] = atomicAdd(&dsum[4 + t], d);             // the old value used: own address
  uold[t] = atomicExch(&u64[8 + t], (unsigned long long)l);
  uold[128 + t] = atomicCAS(&u64[8 + 128 + t], (unsigned long long)(t & 1), (unsigned long long)l);
  uold[256 + t] = atomicAdd(&u64[8 + 256 + t], 5ull);
}

// double fmin/fmax where both operands may be NaN with different payloads
extern "C" __global__ void nan_payloads(double *out, const double *in) {
  int t = threadIdx.x;
  double a = in[t], b = in[t + 32];
  out[t] = fmin(a, b);
  out[t + 32] = fmax(a, b);
  out[t + 64] = fmin(b, a);
  out[t + 96] = fmax(b, a);
}

// the module's global data: double sin/cos read the CUDA math library's tables through
// relocated constant-bank slots (__cudart_sin_cos_coeffs; __cudart_i2opi_d for arguments past
// 2^31), and a __device__ table of our own, initialised and written
__device__ int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__device__ int hits[64];
extern "C" __global__ void module_data(double *out, int *iout, const double *in) {
  int t = threadIdx.x;
  double x = in[t];
  out[t] = sin(x);
  out[t + 64] = cos(x);
  hits[t] = table[t & 7] * t;
  __syncthreads();
  iout[t] = hits[63 - t] + table[(t * 3) & 7];
}
