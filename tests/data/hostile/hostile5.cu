// Kernels of the fifteenth round of hostile launches (tests/test_hostile_round15.py).

// a persistent kernel whose tickets never end its loop: every block takes tickets from one
// global counter (so the grid's blocks run together from the start, as resident blocks) and
// stops only at a ticket it never gets; each turn writes the ticket through shared memory
__global__ void tickets_forever(unsigned *counter, float *out) {
    __shared__ unsigned ticket;
    __shared__ float s[256];
    for (;;) {
        if (threadIdx.x == 0) ticket = atomicAdd(counter, 1u);
        __syncthreads();
        unsigned t = ticket;
        if (t == 0xffffffffu) break;
        s[threadIdx.x] = t;
        __syncthreads();
        out[threadIdx.x] += s[(threadIdx.x * 2) % 256];
        __syncthreads();
    }
}

// each block takes one ticket and writes it through shared memory: its blocks run together as
// resident blocks, and the largest grid (2^62 blocks) is sampled as any grid's blocks are
__global__ void one_ticket(unsigned *counter, float *out) {
    __shared__ float s[32];
    unsigned t = atomicAdd(counter, 1u);
    s[threadIdx.x % 32] = t;
    __syncthreads();
    out[threadIdx.x] += s[(threadIdx.x * 2) % 32];
}
