// shmem's own kernel: a compare on the block index (P0) made before ptxas unpacks three bits
// of a value into P1-P3 (R2P PR, R2, 0xe) and read after it, as FlashAttention-2's hdim-128
// forward does with its rows' bounds around R2P PR, R2, 0x6. The R2P writes only the
// predicates of its mask: P0 keeps what the proof of alike blocks knows of it
// (tests/test_trace_r2pmask.py).
#define N 128
extern "C" __global__ void rp_rows(float *out, const float *in, int rows) {
  __shared__ float tile[N * 3];
  int t = threadIdx.x;
  bool inside = t + 16 * (int)blockIdx.x < rows;  // on the block index, kept across
  if (inside) tile[N + t] = 0.f;
  tile[t] = in[blockIdx.x * N + t];
  __syncthreads();
  int w = t + (int)tile[t ^ 1];  // bits the next lines test, after the compare
  float v = tile[t];
  float a = (w & 2) ? v * 2.f : v;
  float b = (w & 4) ? a + 1.f : a;
  float c = (w & 8) ? b * b : b;
  tile[2 * N + t] = c;
  if (inside) tile[N + (t ^ 4)] = c;  // the compare read after the R2P
  __syncthreads();
  out[blockIdx.x * N + t] = tile[2 * N + (t ^ 2)] + tile[N + t];
}
