// Kernels of the second round of hostile launches (tests/test_hostile_kernels.py): a lock no
// block releases, a flag no block sets, an mbarrier no one arrives on, a loop that never
// repeats its state, a recursion, a call the tests send outside the code, a cluster kernel
// whose attribute the tests patch, a __constant__ table and a Params struct.
#include <cstdint>

// an endless loop whose state never repeats (a counter in shared memory grows): only the
// instruction budget stops it
__global__ void count_forever(volatile int *flag, int *out) {
    __shared__ int s[32];
    s[threadIdx.x % 32] = 0;
    while (flag[0] != 1) {
        s[threadIdx.x % 32] += 1;
    }
    out[threadIdx.x] = s[threadIdx.x % 32];
}

// a flag in global memory that no block ever sets
__global__ void wait_flag(volatile int *flag, int *out) {
    __shared__ int s[32];
    s[threadIdx.x % 32] = threadIdx.x;
    __syncthreads();
    while (flag[0] == 0) {
    }
    out[threadIdx.x] = s[(threadIdx.x + 1) % 32];
}

// an mbarrier that expects one arrival which never comes: the wait never ends
__global__ void mbar_never(int *out) {
    __shared__ __align__(8) uint64_t bar;
    __shared__ int s[32];
    unsigned addr = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(addr));
    __syncthreads();
    s[threadIdx.x % 32] = threadIdx.x;
    unsigned done = 0;
    while (!done) {
        asm volatile(
            "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; "
            "selp.u32 %0, 1, 0, p; }"
            : "=r"(done)
            : "r"(addr));
    }
    out[threadIdx.x] = s[(threadIdx.x + 3) % 32];
}

// a recursion as deep as n says (a stack in local memory)
__device__ __noinline__ int down(int *s, int n) {
    if (n <= 0) return s[threadIdx.x % 32];
    s[(threadIdx.x + n) % 32] += n;
    return down(s, n - 1) + 1;
}

__global__ void recurse(int *out, int n) {
    __shared__ int s[32];
    s[threadIdx.x % 32] = 0;
    __syncthreads();
    out[threadIdx.x] = down(s, n);
}

// a cluster of two: the tests patch its EIATTR_CTA_PER_CLUSTER to 0, huge and 16x16x16
__global__ void __cluster_dims__(2, 1, 1) clustered(int *out) {
    __shared__ int s[32];
    s[threadIdx.x % 32] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x * 2) % 32];
}

// a __constant__ table read in a shared address
__constant__ int table[64];
__global__ void const_table(int *out) {
    __shared__ int s[64];
    s[table[threadIdx.x % 64] % 64] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[threadIdx.x % 64];
}

// a Params struct by value, as CUTLASS kernels take it
struct Params {
    int *out;
    int n;
    int stride;
    long long big[6];
};
__global__ void params_struct(Params p) {
    __shared__ int s[1024];
    for (int k = 0; k < p.n; k++) s[(threadIdx.x * p.stride + k) % 1024] = k;
    __syncthreads();
    p.out[threadIdx.x] = s[threadIdx.x];
}

// a lock no one releases and nothing else: the waiting threads repeat the same state
__global__ void lock_spin(int *lock, int *out) {
    __shared__ int s[32];
    s[threadIdx.x % 32] = threadIdx.x;
    __syncthreads();
    if (threadIdx.x == 0) atomicExch(lock, 1);
    __syncthreads();
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    out[threadIdx.x] = s[(threadIdx.x + 5) % 32];
}

// a plain call (the tests patch its target outside the code)
__device__ __noinline__ int twice(int *s, int v) { return s[v % 32] * 2; }
__global__ void calls_twice(int *out) {
    __shared__ int s[32];
    s[threadIdx.x % 32] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = twice(s, threadIdx.x);
}

// a flag in the next CTA's shared memory (distributed shared memory) that no CTA sets: a
// spin of remote loads, launched in a cluster (--cluster 16)
#include <cooperative_groups.h>
__global__ void wait_peer(int *out) {
    __shared__ int flag;
    __shared__ int s[32];
    cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
    if (threadIdx.x == 0) flag = 0;
    s[threadIdx.x % 32] = threadIdx.x;
    cl.sync();
    volatile int *peer = cl.map_shared_rank(&flag, (cl.block_rank() + 1) % cl.num_blocks());
    while (*peer == 0) {
    }
    out[threadIdx.x] = s[(threadIdx.x + 1) % 32];
}
