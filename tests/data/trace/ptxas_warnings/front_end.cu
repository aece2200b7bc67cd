// nvcc's front end's warnings of a build that succeeds (tests/test_ptxas_warnings.py), as
// CUDA 13.0 writes them: the host preprocessor's #warning, a narrowing conversion, a
// misplaced #pragma unroll, a deprecated function (and nvcc's note on its attribute), an
// unused __shared__ array and an unused local; lib/scale.h (given with -I) warns where this
// file instantiates it (line 19).
#warning "tile size not tuned"
#include "scale.h"
__device__ __attribute__((deprecated("use twice"))) float old_twice(float x) { return x * 2; }
__global__ void warned(float *out, int n) {
    __shared__ float tile[64];
    __shared__ float unused_tile[32];
    int unused_local = 3;
    int k = threadIdx.x;
    tile[k] = out[k];
    __syncthreads();
    char c = 1000;
#pragma unroll
    out[k] = tile[63 - k] + c;
    out[k] = old_twice(out[k]) + scaled(n);
}
