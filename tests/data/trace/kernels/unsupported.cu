// An int8 tensor-core product (IMMA), which the trace emulator does not run: shmem trace must
// stop with an error naming the instruction and this line. Launch: --block 32
__global__ void int8_mma(int *out, const int *in) {
  __shared__ int tile[32 * 4];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  int a0 = tile[threadIdx.x], a1 = tile[(threadIdx.x + 1) % 32], b0 = tile[(threadIdx.x + 2) % 32];
  int d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
               : "+r"(d0), "+r"(d1), "+r"(d2), "+r"(d3) : "r"(a0), "r"(a1), "r"(b0));
  out[threadIdx.x] = d0 + d1 + d2 + d3;
}
