// Two kernels, each with a front-end warning of its own, and a #warning of the whole file
// (tests/test_ptxas_warnings.py): each kernel's report shows its own and the file's.
#warning "file level"
__device__ float helper(float x) { return x * 3; }
__global__ void first(float *out) {
    __shared__ float unused_a[32];
    int k = threadIdx.x;
    char c = 1000;
    out[k] = helper(out[k]) + c;
}

__global__ void second(float *out) {
    int unused_b = 3;
    __shared__ float tile[64];
    int k = threadIdx.x;
    tile[k] = out[k];
    __syncthreads();
    out[k] = tile[63 - k];
}
