// shmem's own kernel: a trip count on the block index that ptxas spills to local memory
// (__maxnreg__(24) and 32 values live across a long chain: STL [R1+0x38] after it is made,
// LDL before the second loop reads it), as FlashAttention-2's hdim-128 forward spills its
// n_block_max. The proof of alike blocks follows the block index through the spill and the
// refill (shmem_cli/trace/emulator/alike/forms.py), tests/test_trace_spills.py.
#define N 128
extern "C" __global__ void __maxnreg__(24) sp_rows(float *out, const float *in, int k, int cap) {
  __shared__ float tile[N * 5];
  int n = min((blockIdx.x * 3 + k) / (unsigned)cap, 5u);  // rows this block stores
  for (int r = 0; r < n; ++r) tile[r * N + threadIdx.x] = 0.f;  // (n used before the spill)
  const float *p = in + blockIdx.x * N * 32 + threadIdx.x;
  float a[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) a[i] = p[i * N];
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < 32; ++i) {
#pragma unroll
    for (int j = 0; j < 32; ++j) a[j] = a[j] * a[(j + i) % 32] + s;
    s += a[i];
  }
  for (int r = 0; r < n; ++r) tile[r * N + threadIdx.x] = s + r;
  __syncthreads();
  float t = 0.f;
  for (int r = 0; r < n; ++r) t += tile[r * N + (threadIdx.x ^ 1)];
  out[blockIdx.x * N + threadIdx.x] = t;
}
