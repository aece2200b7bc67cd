// Calls of one helper of the user's own (an asm load, as ldmatrix and cp.async wrappers are
// written) from two lines, one after the other: shmem places each row at the helper's asm
// line and names the call it came from (docs/trace.md, "Each row is placed at ...").
__device__ __forceinline__ float ld_shared(const float *p) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"((unsigned)__cvta_generic_to_shared(p)));
  return v;
}

__global__ void helper_calls(float *out) {
  __shared__ float tile[32 * 33];
  for (int i = threadIdx.x; i < 32 * 33; i += 32) tile[i] = i;
  __syncthreads();
  float sum = 0;
  for (int k = 0; k < 4; ++k) {
    sum += ld_shared(tile + threadIdx.x * 32 + k);  // a column of 32-float rows: 32-way
    sum += ld_shared(tile + threadIdx.x * 33 + k);  // rows of 33 floats: no conflict
  }
  out[threadIdx.x] = sum;
}

// A helper called from one line only, the whole body of its kernel: its rows name no caller
// (the line says it all; a wrapper's call would be named on every row).
__device__ __forceinline__ void body(float *out, float *tile) {
  for (int i = threadIdx.x; i < 32 * 33; i += 32) tile[i] = i;
  __syncthreads();
  out[threadIdx.x] = ld_shared(tile + threadIdx.x * 32);
}

__global__ void one_call(float *out) {
  __shared__ float tile[32 * 33];
  body(out, tile);
}
