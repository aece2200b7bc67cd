// shmem's own kernel for issue 20: more predicates live across a loop than there are predicate
// registers; ptxas keeps them in a general register (P2R R, PR, ...) and restores them (R2P PR).
extern "C" __global__ void ev_p2r(float *out, const float *in, const int *mask, int iters) {
  __shared__ float tile[10][128];
  int t = threadIdx.x;
  int w = mask[t];
  bool p[10];
#pragma unroll
  for (int k = 0; k < 10; ++k) p[k] = (w >> k) & 1;
  float acc = 0.f;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 10; ++k)
      if (p[k]) tile[k][(t * (k + 1)) % 128] = in[i * 128 + t] * k;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 10; ++k)
      if (p[9 - k]) acc += tile[k][t];
    __syncthreads();
  }
  out[t] = acc;
}
