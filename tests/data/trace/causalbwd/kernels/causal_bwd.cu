// The project's own kernel (no upstream code): a causal softmax's backward pass in place, in
// the shape of llm.c's attention backward without cuDNN. Each block takes 4 rows of one head's
// T x T matrix, counting down from the last (t0 = T - 1 - 4 * blockIdx.x), returns at a row
// below 0, reduces sum(att * datt) over the row's causal part through shared memory (each
// warp's lane 0 stores its sum, then every warp reads the 8 sums), and writes the row: the
// causal part under a guard on the row index (j <= t), zeros past it.
__global__ void causal_bwd(float* datt, const float* att, int T, float scale) {
    __shared__ float part[8];
    int t0 = T - 1 - 4 * blockIdx.x;
    att += (size_t)blockIdx.y * T * T;
    datt += (size_t)blockIdx.y * T * T;
    for (int r = 0; r < 4; ++r) {
        int t = t0 - r;
        if (t < 0) return;
        float s = 0.f;
        for (int j = threadIdx.x; j <= t; j += 256) s += att[t * T + j] * datt[t * T + j];
        for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
        __syncthreads();
        float total = part[threadIdx.x & 7];
        for (int o = 4; o; o >>= 1) total += __shfl_xor_sync(0xffffffffu, total, o);
        __syncthreads();
        for (int j = threadIdx.x; j < T; j += 256) {
            if (j <= t) {
                datt[t * T + j] = scale * att[t * T + j] * (datt[t * T + j] - total);
            } else {
                datt[t * T + j] = 0.f;
            }
        }
    }
}
