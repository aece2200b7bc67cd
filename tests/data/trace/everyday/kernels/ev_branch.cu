// shmem's own kernels for issue 20: shared-memory accesses whose lanes or count are decided by
// global data through a branch or predicate (not through their addresses).
extern "C" __global__ void ev_filter(int *out, const int *flags, const int *keys) {
  __shared__ int kept[256];
  __shared__ int s[512];
  int t = threadIdx.x;
  kept[t] = 0;
  s[t] = keys[t];
  s[t + 256] = 0;
  __syncthreads();
  if (flags[t] != 0) kept[(t * 2) % 256] = t;  // lanes decided by flags (global data)
  for (int j = 0; j < (keys[t] & 3); ++j) s[256 + (t * 8 + j) % 256] += j;  // trip count by keys
  // one compare-exchange step of a bitonic sort: which lanes store depends on the keys
  int partner = t ^ 1;
  int a = s[t], b = s[partner];
  __syncthreads();
  if ((t & 1) == 0 && a > b) { s[t] = b; s[partner] = a; }
  __syncthreads();
  out[t] = kept[t] + s[t] + s[256 + t];
}
