// A tiny "grouped" kernel (issue 29): like a grouped or pointer-array GEMM, every block reads
// its problem (sizes and operand pointers) from a device array the host filled before the
// launch, so how much shared-memory work it does, and at which addresses, comes from device
// memory: shmem trace needs that memory (--memory ADDR=@FILE) to trace the real run.
//
// Block g < groups does problems[g].K / 256 tiles. Per tile each thread stores four words of
// sa (sa[t + 64 i]) and one of sb (sb[t]), then reads sa[(t * N) & 255] (N from the problem:
// the read's bank conflicts) and sb[t ^ 1]. Blocks g >= groups return at once. Launch with
// 64 threads a block.
// nvcc -cubin -lineinfo -O3 -arch=sm_90 -o grouped.sm_90.cubin grouped.cu

struct Problem {
    int M;           // outputs the block writes (threads t < M)
    int N;           // stride of the reads of sa, in words
    int K;           // elements of A to reduce: K / 256 tiles
    int pad;
    const float* A;  // K floats
    const float* B;  // K / 4 floats
};

extern "C" __global__ void grouped_tiles(const Problem* __restrict__ problems, int groups,
                                         float* __restrict__ out)
{
    __shared__ float sa[256];
    __shared__ float sb[64];
    const int g = blockIdx.x;
    if (g >= groups) return;
    const Problem p = problems[g];
    const int t = threadIdx.x;
    float acc = 0.f;
    for (int k0 = 0; k0 < p.K; k0 += 256) {
#pragma unroll
        for (int i = 0; i < 4; ++i) sa[t + 64 * i] = p.A[k0 + t + 64 * i];
        sb[t] = p.B[k0 / 4 + t];
        __syncthreads();
        acc += sa[(t * p.N) & 255] * sb[t ^ 1];
        __syncthreads();
    }
    if (t < p.M) out[g * 64 + t] = acc;
}
