// ptxas's spill warning (tests/test_ptxas_warnings.py): 96 live floats per thread, built with
// --nvcc-arg=-maxrregcount=32, spill to local memory; CUDA 13.0's ptxas, given
// --warn-on-spills (as shmem builds), prints "ptxas warning : Registers are spilled to local
// memory in function '_Z6spillsPfi', ... bytes spill stores, ... bytes spill loads".
// A second kernel that spills nothing: the warning is not said of it.
__global__ void spills(float *out, int n) {
    __shared__ float tile[256];
    float acc[96];
#pragma unroll
    for (int i = 0; i < 96; ++i) acc[i] = out[threadIdx.x * 96 + i];
    for (int k = 0; k < n; ++k) {
#pragma unroll
        for (int i = 0; i < 96; ++i) acc[i] = acc[i] * acc[(i + k) % 96 ? i : 0] + 1.0f;
    }
    tile[threadIdx.x] = acc[0];
    __syncthreads();
    float s = 0;
#pragma unroll
    for (int i = 0; i < 96; ++i) s += acc[i];
    out[threadIdx.x] = s + tile[(threadIdx.x + 1) % 256];
}

__global__ void quiet(float *out) {
    __shared__ float tile[256];
    tile[threadIdx.x] = out[threadIdx.x];
    __syncthreads();
    out[threadIdx.x] = tile[255 - threadIdx.x];
}
