// The pace of the SM clock against a warp's instructions (issue 30, the clock model's
// "2 cycles a warp instruction"): what one warp's loops read from clock64() on the GPU.
// Launch with 32 threads (cp_*) and one block; cp_alu_chain's dt holds 64 values. Each writes, per lane, what it counted or
// timed; nothing here is timing-free: these launches measure the GPU's pace, they are not
// an oracle of the trace.

// a loop with register work only between clock reads: how many turns fit in `budget`
extern "C" __global__ void cp_count(int *count, long long budget) {
  long long t0 = clock64();
  int n = 0;
  while (clock64() - t0 < budget) ++n;
  count[threadIdx.x] = n;
}

// a chain of `n` dependent volatile shared loads: its cycles (a load's latency)
extern "C" __global__ void cp_lds_chain(long long *dt, int n) {
  __shared__ int s[32];
  volatile int *v = s;
  s[threadIdx.x] = (threadIdx.x + 1) % 32;
  __syncwarp();
  int at = threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < n; ++i) at = v[at];
  dt[threadIdx.x] = clock64() - t0 + (at & 0);
}

// `n` turns of a dependent integer chain (multiply-add), no memory: its cycles, and the
// chain's value after them (dt[32 + lane])
extern "C" __global__ void cp_alu_chain(long long *dt, int n, int seed) {
  int x = seed + threadIdx.x;
  long long t0 = clock64();
  for (int i = 0; i < n; ++i) x = x * 3 + i;
  long long t1;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t1) : "r"(x));
  dt[threadIdx.x] = t1 - t0;
  dt[32 + threadIdx.x] = x;
}
