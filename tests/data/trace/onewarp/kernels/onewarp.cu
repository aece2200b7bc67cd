// A naive flash attention with one warp per block, written for this project (nothing here is
// upstream code): block b, thread t owns query row 32 b + t of a (n x 32) Q. For each tile of
// 32 keys the warp stages K and V in shared memory, each thread scores its row against the 32
// keys (a loop of shared loads and FFMAs), keeps a running maximum and sum, and adds its row
// of P V into its output row in global memory. Every thread runs the same nested loops, about
// 4,300 instructions per tile of keys: the shape of a loop-heavy kernel whose blocks are one
// warp each, where the emulator's cost is its cost per instruction of one warp stepping alone.
//
// nvcc -cubin -lineinfo -O3 -arch=sm_90 (build.sh)
#define D 32
#define BC 32

__global__ void onewarp_attn(const float *q, const float *k, const float *v, float *out, int n,
                             float scale) {
  __shared__ float qs[BC * D];
  __shared__ float ks[BC * D];
  __shared__ float vs[BC * D];
  __shared__ float s[BC * (BC + 1)];
  int t = threadIdx.x;
  int row = blockIdx.x * BC + t;
  for (int x = 0; x < D; x++) {
    qs[t * D + x] = q[row * D + x];
    out[row * D + x] = 0.0f;
  }
  float m_prev = -1e30f, l_prev = 0.0f;
  for (int j = 0; j < n / BC; j++) {
    __syncwarp();
    for (int x = 0; x < D; x++) {
      ks[t * D + x] = k[(j * BC + t) * D + x];
      vs[t * D + x] = v[(j * BC + t) * D + x];
    }
    __syncthreads();
    float m = -1e30f;
    for (int y = 0; y < BC; y++) {
      float sum = 0.0f;
      for (int x = 0; x < D; x++) sum = fmaf(qs[t * D + x], ks[y * D + x], sum);
      sum *= scale;
      s[t * (BC + 1) + y] = sum;
      m = fmaxf(m, sum);
    }
    float l = 0.0f;
    for (int y = 0; y < BC; y++) {
      float p = __expf(s[t * (BC + 1) + y] - m);
      s[t * (BC + 1) + y] = p;
      l += p;
    }
    float m_new = fmaxf(m_prev, m);
    float a = __expf(m_prev - m_new), b = __expf(m - m_new);
    float l_new = a * l_prev + b * l;
    for (int x = 0; x < D; x++) {
      float pv = 0.0f;
      for (int y = 0; y < BC; y++) pv = fmaf(s[t * (BC + 1) + y], vs[y * D + x], pv);
      out[row * D + x] = (l_prev * a * out[row * D + x] + b * pv) / l_new;
    }
    m_prev = m_new;
    l_prev = l_new;
    __syncthreads();
  }
}
