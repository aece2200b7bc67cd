// A 64-bit warp match (MATCH.ANY.U64), which the trace emulator does not run: shmem trace
// must stop with an error naming the instruction and this line. Launch: --block 32
__global__ void int8_mma(int *out, const int *in) {
  __shared__ int tile[32 * 4];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  long long key = ((long long)tile[threadIdx.x] << 32) | tile[(threadIdx.x + 1) % 32];
  unsigned d0 = 0;
  d0 +=
      __match_any_sync(0xffffffffu, key);
  out[threadIdx.x] = d0;
}
