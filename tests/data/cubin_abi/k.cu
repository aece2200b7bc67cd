extern "C" __global__ void k(float *o, int n) { __shared__ float s[64]; s[threadIdx.x] = n; __syncthreads(); o[threadIdx.x] = s[63 - threadIdx.x]; }
