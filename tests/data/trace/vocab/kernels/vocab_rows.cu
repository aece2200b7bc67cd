// The project's own kernel (no upstream code): a warp per row of a vocabulary-wide matrix,
// as a fused classifier's softmax and gradient loops go: the row's index is 64 bits, each
// step reads and writes the row's element i at idx * P + i (64-bit addresses made anew at
// every step, their high words taking the low words' carries: the element pairs are read
// swapped, i ^ 1, which nvcc cannot step as a pointer) and stores its running sum to shared
// memory.
__global__ void vocab_rows(float* out, const float* logits, int rows, int V, int P) {
    volatile __shared__ float part[8][32];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    long long idx = blockIdx.x * (blockDim.x / 32) + warp;
    if (idx >= rows) return;
    float acc = 0.f;
    for (int i = lane; i < V; i += 32) {
        float v = logits[idx * P + (i ^ 1)];
        acc += v;
        part[warp][lane] = acc;
        out[idx * P + i] = v * acc;
    }
    __syncwarp();
    out[idx * P + lane] = part[warp][(lane + 1) % 32];
}
