// The project's own kernel for `shmem trace --arg KEY+OFFSET=...` (issue 29): a struct passed
// by value whose first field is a device pointer, as CuTe passes a Tensor (its gmem pointer,
// then its layout). Each thread t < v.n copies v.p[t] into shared memory at word t * v.stride,
// then writes out[t] = the word thread n - 1 - t stored (out[t] = v.p[n - 1 - t]).
struct View {
  float *p;    // +0: the data
  int n;       // +8: how many elements
  int stride;  // +12: words between two elements in shared memory
};

__global__ void view_reverse(View v, float *out) {
  __shared__ float tile[1024];
  int t = threadIdx.x;
  if (t < v.n) tile[t * v.stride] = v.p[t];
  __syncthreads();
  if (t < v.n) out[t] = tile[(v.n - 1 - t) * v.stride];
}
