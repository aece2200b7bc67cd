// shmem's own kernel: a parameter loaded under a guard on global data. FlashAttention-2's
// softmax writes its log-sum-exp as `sum == 0 ? INFINITY : max * scale + log(sum)`, and
// ptxas loads `scale` from the parameters only where the row's sum is not zero
// (`@P3 LDC R8, c[0x0][0x228]`): a decision on global data that only chooses a register's
// value, which the proof of alike blocks must let through (tests/test_trace_ldcguard.py).
#define N 128
struct Rows {
  const float *in;
  float *out;
  float *lse;
  float scale;
};
extern "C" __global__ void lg_lse(const Rows p) {
  __shared__ float part[N];
  float v = p.in[blockIdx.x * N + threadIdx.x];
  part[threadIdx.x] = v;
  __syncthreads();
  float sum = part[(threadIdx.x + 1) % N] + part[threadIdx.x];
  float inv = (sum == 0.f || sum != sum) ? 1.f : 1.f / sum;
  p.out[blockIdx.x * N + threadIdx.x] = v * inv;
  if (threadIdx.x < 32) {
    float l = (sum == 0.f || sum != sum) ? INFINITY : v * p.scale + __logf(sum);
    p.lse[blockIdx.x * 32 + threadIdx.x] = l;
  }
}
