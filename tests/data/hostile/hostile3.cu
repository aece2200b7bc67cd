// Kernels of the thirteenth adversarial round (docs/robustness.md, "What was found and fixed"
// item 13): blocks that wait on one another while holding all the shared memory a block may
// have, a TMA copy through a map of another rank, a local array larger than the trace's stack,
// blocks larger than the kernel's registers or __launch_bounds__ allow.

#include <cuda.h>

// block b spins until block b+1 sets flag[b] (the last block never waits): every batch of
// blocks is set aside holding its 227 KiB CTAs' shared memory until a later batch runs
__global__ void chain_smem(volatile int *flag, int *out) {
    extern __shared__ int d[];
    d[threadIdx.x] = threadIdx.x;
    if (blockIdx.x + 1 < gridDim.x)
        while (flag[blockIdx.x] == 0) {
        }
    if (blockIdx.x > 0 && threadIdx.x == 0) flag[blockIdx.x - 1] = 1;
    __syncthreads();
    out[threadIdx.x] = d[threadIdx.x ^ 1];
}

// a 2-D TMA load: the tests give it maps of rank 1 and 5
__global__ void tma_2d(const __grid_constant__ CUtensorMap map, int *out, int tx) {
    extern __shared__ __align__(128) char box[];
    __shared__ __align__(8) unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(b));
        asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(b), "r"(tx));
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
            " [%0], [%1, {%2, %2}], [%3];" ::"r"((unsigned)__cvta_generic_to_shared(box)),
            "l"(&map), "r"(0), "r"(b)
            : "memory");
    }
    unsigned done = 0;
    while (!done)
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared.b64 p, [%1], 0; selp.u32 %0, 1, 0, "
            "p; }"
            : "=r"(done)
            : "r"(b));
    out[threadIdx.x] = box[threadIdx.x];
}

// a 1 MiB local array: its frame is far below the trace's 16 KiB stack
__global__ void big_frame(int *out, int n) {
    char buf[1 << 20];
    for (int i = 0; i < n; i++) buf[(i * 4099) & ((1 << 20) - 1)] = i;
    out[threadIdx.x] = buf[(threadIdx.x * 77) & ((1 << 20) - 1)];
}

// 200 live floats a thread: about 216 registers, so an SM holds 288 threads of it (9 warps)
__global__ void many_regs(const float *in, float *out, volatile int *flag) {
    __shared__ float s[256];
    float acc[200];
#pragma unroll
    for (int i = 0; i < 200; i++) acc[i] = in[i * 256 + threadIdx.x];
    while (flag[0] == 1) {  // (a zero-filled flag: no wait) the loads stay before it
    }
    float t = 0;
#pragma unroll
    for (int i = 0; i < 200; i++) {
        s[threadIdx.x % 256] = acc[i];
        t += s[(threadIdx.x + i) % 256] * acc[(i + 7) % 200];
    }
    out[threadIdx.x] = t;
}

// __launch_bounds__(256): CUDA launches it with at most 256 threads a block
__global__ void __launch_bounds__(256) bounded(int *out) {
    __shared__ int s[256];
    s[threadIdx.x % 256] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % 256];
}
