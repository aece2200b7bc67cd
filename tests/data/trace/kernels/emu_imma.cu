// shmem trace emulator test: mma.sync with int8 inputs (IMMA), fragments loaded straight
// from global memory in the PTX fragment layout.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../emu_imma_sm90.cubin emu_imma.cu
__global__ void emu_imma(const unsigned *a, const unsigned *b, int *d) {
  unsigned lane = threadIdx.x;
  unsigned a0 = a[lane * 4], a1 = a[lane * 4 + 1], a2 = a[lane * 4 + 2], a3 = a[lane * 4 + 3];
  unsigned b0 = b[lane * 2], b1 = b[lane * 2 + 1];
  int c0 = lane, c1 = -(int)lane, c2 = 7, c3 = 0;
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(c0), "+r"(c1), "+r"(c2), "+r"(c3)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  d[lane * 4] = c0; d[lane * 4 + 1] = c1; d[lane * 4 + 2] = c2; d[lane * 4 + 3] = c3;
}
