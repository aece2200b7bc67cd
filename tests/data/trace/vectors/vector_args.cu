// --arg for a by-value vector of floats (cuda/launch_values.py, FLOAT_VECTORS): each
// component goes in as its type takes a number. The stores' strides are the vectors' y
// components, so the trace's bank conflicts show what the kernel read: a float2 stored as
// one double, or its components as integers' bits, gives other strides.
#include <cuda_fp16.h>

__global__ void vector_args(float2 v, __half2 h, float *out) {
  __shared__ float s[32 * 33];
  int lane = threadIdx.x;
  s[lane * (int)v.y] = v.x;                            // (int)v.y words apart
  s[lane * (int)__high2float(h) + 1] = __low2float(h);  // (int)h.y words apart
  __syncthreads();
  out[lane] = s[lane] + s[lane + 32];
}
