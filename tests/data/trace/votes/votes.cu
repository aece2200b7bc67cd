// Warp votes on the block index (issue 30, shmem_cli/trace/emulator/alike/votes.py), as
// CUTLASS 3.x's cooperative GEMMs in clusters vote on a flag made from the CTA's place in the
// grid: each kernel's vote picks the half of a shared buffer a warp writes and reads back, so
// the blocks fall into one class per outcome. Totals are checked against every block run
// (tests/test_trace_votes.py); counted by hand there too.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o votes.sm_90.cubin votes.cu
#define N 256

// lane 5 of a block b with b % 3 == 0 raises the flag: __any_sync is true in those blocks
extern "C" __global__ void vt_any(float *out) {
  __shared__ float s[2 * N];
  int t = threadIdx.x;
  bool flag = blockIdx.x % 3 == 0 && (t & 31) == 5;
  int half = __any_sync(0xffffffff, flag) ? N : 0;
  s[half + t] = t;
  __syncwarp();
  out[blockIdx.x * N + t] = s[half + (t ^ 1)];
}

// lane 7 holds b % 2 == 0, every other lane b % 3 != 1: __all_sync is true where both hold
// (blocks 0, 2, 6, 8 of 12), and the stride of the read back doubles there
extern "C" __global__ void vt_all(float *out) {
  __shared__ float s[2 * N];
  int t = threadIdx.x;
  bool flag = (t & 31) == 7 ? blockIdx.x % 2 == 0 : blockIdx.x % 3 != 1;
  int stride = __all_sync(0xffffffff, flag) ? 2 : 1;
  s[t] = t;
  s[N + t] = -t;
  __syncthreads();
  out[blockIdx.x * N + t] = s[(t * stride) % (2 * N)];
}
