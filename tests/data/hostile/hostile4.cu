// Kernels of the fourteenth round of hostile launches (tests/test_hostile_round14.py).

// one thread of the block loops for ever (a counter in shared memory grows), the others exit:
// the block's instruction budget counts thread-instructions, but each step runs that thread
// alone, so only the wall-time limit stops it
__global__ void alone(volatile int *flag, int *out) {
    __shared__ int s[32];
    s[threadIdx.x % 32] = 0;
    if (threadIdx.x == 0) {
        while (flag[0] != 1) {
            s[0] += 1;
        }
    }
    out[threadIdx.x] = s[threadIdx.x % 32];
}

// every thread adds to one shared word for ever: nvcc aggregates the adds of a warp, so one
// lane a warp runs the atomic
__global__ void atomic_forever(volatile int *flag, int *out) {
    __shared__ int s[1];
    s[0] = 0;
    __syncthreads();
    while (flag[0] != 1) {
        atomicAdd(&s[0], 1);
    }
    out[threadIdx.x] = s[0];
}
