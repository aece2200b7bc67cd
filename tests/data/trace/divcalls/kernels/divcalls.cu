// A row scaled by a quotient on its data, four divisions unrolled: ptxas calls the division's
// slow path from four sites and schedules a move of an argument between the MOV of the return
// address and the CALL (MOV R16, 0x6b0; IMAD.MOV.U32 R3, RZ, RZ, R4; CALL ...), as in llm.c's
// softmax_forward_kernel7. Each block's row: its sum and largest value through shared memory,
// then every value less the largest, divided by the sum.
__global__ void row_scale(float *out, const float *in, int n) {
  __shared__ float s[2];
  const float *x = in + blockIdx.x * n;
  float *y = out + blockIdx.x * n;
  float sum = 0.f, most = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    sum += x[i];
    most = fmaxf(most, x[i]);
  }
  if (threadIdx.x == 0) {  // (thread 0's own part: enough for the paths)
    s[0] = sum;
    s[1] = most;
  }
  __syncthreads();
  float t = s[0], m = s[1];
  for (int i = threadIdx.x; i < n; i += blockDim.x * 4) {
    float r[4];
#pragma unroll
    for (int u = 0; u < 4; u++) r[u] = x[min(n - 1, i + u * blockDim.x)] - m;
#pragma unroll
    for (int u = 0; u < 4; u++)
      if (i + u * blockDim.x < n) y[i + u * blockDim.x] = r[u] / t;
  }
}
