// Convergence barriers saved with BMOV: a divergent region of the kernel calls a function
// with a divergent region of its own that calls another function, so the -G build's
// function saves the kernel's barrier (BMOV.32.CLEAR) and restores it (BMOV.32) around its
// own. After the region the warp is whole again. The project's own code.
// Build: nvcc -cubin -G -arch=sm_90 -o ../bmov.g.sm_90.cubin bmov.cu
//        nvcc -cubin -O3 -arch=sm_90 -o ../bmov.o3.sm_90.cubin bmov.cu
__device__ __noinline__ int leaf(int x) { return x * 3 + 1; }
__device__ __noinline__ int branchy(int x, int lane) {
  int r;
  if (lane & 2)
    r = leaf(x);
  else
    r = leaf(x + 7);
  return r;
}

// odd lanes call branchy, even lanes compute in place; then a shared load of one word per
// lane and the active mask
extern "C" __global__ void one_side(unsigned *out, unsigned *mask) {
  __shared__ unsigned s[64];
  int t = threadIdx.x;
  s[t] = t * 11u;
  __syncthreads();
  int v;
  if (t & 1)
    v = branchy(t, t);
  else
    v = t * 5;
  mask[t] = __activemask();
  out[t] = s[t ^ 1] + v;
}

// both sides call branchy (from two call sites)
extern "C" __global__ void both_sides(unsigned *out, unsigned *mask) {
  __shared__ unsigned s[64];
  int t = threadIdx.x;
  s[t] = t * 11u;
  __syncthreads();
  int v;
  if (t & 1)
    v = branchy(t, t);
  else
    v = branchy(t + 100, t + 1);
  mask[t] = __activemask();
  out[t] = s[t ^ 1] + v;
}

// a recursion with a divergent region at each level, its depth each lane's own: every
// level saves its caller's barrier (the value goes to the stack with the registers it saves)
__device__ __noinline__ int walk(int x, int n) {
  int r = x;
  if (n > 0) {
    if (x & 1)
      r = walk(x * 3 + 1, n - 1) + 1;
    else
      r = walk(x / 2, n - 1);
  }
  return r;
}

// odd lanes recurse (depth t % 4), even lanes keep t
extern "C" __global__ void recursive(unsigned *out, unsigned *mask) {
  __shared__ unsigned s[64];
  int t = threadIdx.x;
  s[t] = t * 11u;
  __syncthreads();
  int v;
  if (t & 1)
    v = walk(t, t % 4);
  else
    v = t;
  mask[t] = __activemask();
  out[t] = s[t ^ 1] + v;
}
