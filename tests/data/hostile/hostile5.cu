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
