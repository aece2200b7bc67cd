// The project's own kernel for tests/test_trace_bigwait.py: a split-K style fixup between
// two blocks of a grid whose blocks each hold much state (1,024 threads of 256 registers,
// big dynamic shared memory), so that a batch of them run together passes the repeat
// check's bound (shmem_cli/trace/emulator/budget.py, REPEAT_BYTES). Built by build.sh.

__device__ __forceinline__ int load_acquire(const int *p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void store_release(int *p, int v) {
  asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// A weak load and store (no .volatile, .relaxed or .acquire; no fence anywhere): ptxas keeps
// the load inside a loop only where something else there stays, here a __nanosleep (without
// one it hoists the load, or drops the loop).
__device__ __forceinline__ int load_weak(const int *p) {
  int v;
  asm volatile("ld.global.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

__device__ __forceinline__ void store_weak(int *p, int v) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(v));
}

// Block b (n = blockDim.x threads) writes b + 1 rows of n ints to its dynamic shared memory,
// row i at slot i % slots (column t: in[t] + b + i), then each thread sums column n - 1 - t
// of those b + 1 rows as read back (a slot holds the last row written to it). Block `setter`
// writes its sum to its row of out and then sets *flag = 1; block `waiter` first waits
// (thread 0) until *flag != 0, and adds the setter's row of out to its own sum. Every
// block writes its sum to out[b * n + t]. The dynamic shared memory holds slots * n ints;
// `in` holds n ints. The wgmma (never run: `setter` is not negative) only makes ptxas's
// code name a wgmma's registers, as a Hopper GEMM's does (the trace keeps 256 registers a
// thread for such code).
extern "C" __global__ void bw_fixup(const int *in, int *out, int *flag, int waiter, int setter,
                                    int slots) {
  extern __shared__ int rows[];
  int b = blockIdx.x, t = threadIdx.x, n = blockDim.x;
  if (b == waiter) {
    if (t == 0) {
      while (load_acquire(flag) == 0) {
      }
    }
    __syncthreads();
  }
  for (int i = 0; i <= b; ++i) rows[(i % slots) * n + t] = in[t] + b + i;
  __syncthreads();
  int sum = 0;
  for (int i = 0; i <= b; ++i) sum += rows[(i % slots) * n + (n - 1 - t)];
  if (b == waiter) sum += out[setter * n + t];
  out[b * n + t] = sum;
  if (b == setter) {
    __threadfence();
    __syncthreads();
    if (t == 0) store_release(flag, 1);
  }
  if (setter < 0) {  // never: see above
    float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
    unsigned long long desc = (unsigned long long)(size_t)in;
    asm volatile(
        "wgmma.fence.sync.aligned;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %4, 0, 1, 1, 0, "
        "0;\n"
        "wgmma.commit_group.sync.aligned;\n"
        "wgmma.wait_group.sync.aligned 0;\n"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "l"(desc)
        : "memory");
    out[t] = __float_as_int(d0 + d1 + d2 + d3);
  }
}

// bw_weak: bw_fixup with the waiter spinning on a weak load (a __nanosleep in the loop) and
// the setter setting the flag with a weak store after a __syncthreads, no fence: its code has
// no atomic, no fence and no strong or volatile load, so only the loop itself says that it
// may wait on another block. Same launch, same values.
extern "C" __global__ void bw_weak(const int *in, int *out, int *flag, int waiter, int setter,
                                   int slots) {
  extern __shared__ int rows[];
  int b = blockIdx.x, t = threadIdx.x, n = blockDim.x;
  if (b == waiter) {
    if (t == 0) {
      while (load_weak(flag) == 0) {
        __nanosleep(32);
      }
    }
    __syncthreads();
  }
  for (int i = 0; i <= b; ++i) rows[(i % slots) * n + t] = in[t] + b + i;
  __syncthreads();
  int sum = 0;
  for (int i = 0; i <= b; ++i) sum += rows[(i % slots) * n + (n - 1 - t)];
  if (b == waiter) sum += out[setter * n + t];
  out[b * n + t] = sum;
  if (b == setter) {
    __syncthreads();
    if (t == 0) store_weak(flag, 1);
  }
  if (setter < 0) {  // never: as in bw_fixup
    float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
    unsigned long long desc = (unsigned long long)(size_t)in;
    asm volatile(
        "wgmma.fence.sync.aligned;\n"
        "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %4, 0, 1, 1, 0, "
        "0;\n"
        "wgmma.commit_group.sync.aligned;\n"
        "wgmma.wait_group.sync.aligned 0;\n"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "l"(desc)
        : "memory");
    out[t] = __float_as_int(d0 + d1 + d2 + d3);
  }
}
