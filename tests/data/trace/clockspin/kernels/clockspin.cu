// Kernels that read the clock (tests/test_trace_clock.py): delay loops the trace
// fast-forwards, and timing code around real work, each with a twin as the oracle.
// Launch them with 256 threads a block (N), cs_stuck and cs_timeout with 32.
#define N 256

// every kernel's shared-memory work: a store per thread, a barrier, a two-way load
__device__ __forceinline__ void exchange(float *out) {
  __shared__ float s[N];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x * 2) % N];
}

__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// the oracle: the exchange alone
extern "C" __global__ void cs_plain(float *out, long long cycles) { exchange(out); }

// a clock64() delay, then the exchange
extern "C" __global__ void cs_delay(float *out, long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  exchange(out);
}

// a delay measured in 32 bits (its difference wraps as the low word does)
extern "C" __global__ void cs_clock32(float *out, unsigned cycles) {
  unsigned t0 = (unsigned)clock();
  while ((unsigned)clock() - t0 < cycles) {
  }
  exchange(out);
}

// a delay on the global timer (nanoseconds)
extern "C" __global__ void cs_timer(float *out, long long ns) {
  unsigned long long t0 = globaltimer();
  while (globaltimer() - t0 < (unsigned long long)ns) {
  }
  exchange(out);
}

// a backoff: sleep until the clock says the time is up
extern "C" __global__ void cs_backoff(float *out, long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) __nanosleep(256);
  exchange(out);
}

// one lane waits, the others wait for it at the barrier
extern "C" __global__ void cs_lane(float *out, long long cycles) {
  if (threadIdx.x == 0) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
  }
  __syncthreads();
  exchange(out);
}

// sleeps, no clock read
extern "C" __global__ void cs_nap(float *out, long long cycles) {
  for (int i = 0; i < 4; ++i) __nanosleep(1000);
  exchange(out);
}

// timing code: the clock before and after a loop of shared loads, the difference written
extern "C" __global__ void cs_timed(float *out, long long *dt, int n) {
  __shared__ float s[N];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  long long t0 = clock64();
  float acc = 0;
  for (int i = 0; i < n; ++i) acc += s[(threadIdx.x + 3 * i) % N];
  long long t1 = clock64();
  out[threadIdx.x] = acc;
  dt[threadIdx.x] = t1 - t0;
}

// its twin without the clock
extern "C" __global__ void cs_untimed(float *out, long long *dt, int n) {
  __shared__ float s[N];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  float acc = 0;
  for (int i = 0; i < n; ++i) acc += s[(threadIdx.x + 3 * i) % N];
  out[threadIdx.x] = acc;
  dt[threadIdx.x] = 0;
}

// a delay of `cycles`, then 4 rounds of clock64(), the high word alone (%clock_hi) and
// clock64() again, each written: t[(2 i) N + x], hi[i N + x], t[(2 i + 1) N + x]
extern "C" __global__ void cs_series(long long *t, unsigned *hi, long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  for (int i = 0; i < 4; ++i) {
    long long a = clock64();
    unsigned h;
    asm volatile("mov.u32 %0, %%clock_hi;" : "=r"(h));
    long long b = clock64();
    t[(2 * i) * N + threadIdx.x] = a;
    hi[i * N + threadIdx.x] = h;
    t[(2 * i + 1) * N + threadIdx.x] = b;
  }
}

// a spin on a flag no one sets, after one clock read: it can never end
extern "C" __global__ void cs_stuck(int *flag, long long *t) {
  long long t0 = clock64();
  while (*(volatile int *)flag == 0) {
  }
  t[threadIdx.x] = clock64() - t0;
}

// a spin on a flag no one sets, with a timeout on the clock: it ends by the timeout
extern "C" __global__ void cs_timeout(int *flag, float *out, long long cycles) {
  long long t0 = clock64();
  while (*(volatile int *)flag == 0 && clock64() - t0 < cycles) {
  }
  out[threadIdx.x] = threadIdx.x;
}

// two warps of one block (launch with 64 threads): the warp `waiter` waits `wait` cycles on
// the clock while the warp `worker` works (a volatile shared load and store an iteration)
// until its own deadline of `budget` cycles, both from one t0, and writes how many
// iterations it ran (each of its lanes). The wait's loop comes first in the code (the
// emulator runs the smallest pc first). On the GPU the two run side by side: the wait takes
// none of the worker's budget
extern "C" __global__ void cs_overlap(int *count, int waiter, int worker, long long wait,
                                      long long budget) {
  __shared__ int s[32];
  volatile int *v = s;
  int lane = threadIdx.x % 32;
  long long t0 = clock64();
  if (threadIdx.x / 32 == waiter) {
    while (clock64() - t0 < wait) {
    }
  }
  if (threadIdx.x / 32 == worker) {
    int n = 0;
    v[lane] = 0;
    while (clock64() - t0 < budget) {
      v[lane] += 1;
      ++n;
    }
    count[lane] = n;
  }
}

// the same two warps: the warp `worker` times its own section (n volatile shared loads)
// from the t0 both read, while the warp `waiter` waits `wait` cycles; dt[lane] is the
// section's time
extern "C" __global__ void cs_overlap_timed(long long *dt, int waiter, int worker,
                                            long long wait, int n) {
  __shared__ int s[32];
  volatile int *v = s;
  int lane = threadIdx.x % 32;
  long long t0 = clock64();
  if (threadIdx.x / 32 == waiter) {
    while (clock64() - t0 < wait) {
    }
  }
  if (threadIdx.x / 32 == worker) {
    v[lane] = lane;
    int acc = 0;
    for (int i = 0; i < n; ++i) acc += v[(lane + i) % 32];
    dt[lane] = clock64() - t0 + (acc & 0);
  }
}

// the warp `waiter` waits `wait` cycles, then sets a flag the warp `watcher` spins on (a
// handshake: the watcher is parked as a spin on memory, the waiter's clock jumps once it
// is); the watcher writes what it read, the waiter its wait's length (lanes each)
extern "C" __global__ void cs_handoff(int *flag, long long *waited, int *seen, int waiter,
                                      int watcher, long long wait) {
  int lane = threadIdx.x % 32;
  long long t0 = clock64();
  if (threadIdx.x / 32 == waiter) {
    long long t = clock64();
    while (t - t0 < wait) t = clock64();
    waited[lane] = t - t0;
    if (lane == 0) *(volatile int *)flag = 1;
  }
  if (threadIdx.x / 32 == watcher) {
    int f;
    while ((f = *(volatile int *)flag) == 0) {
    }
    seen[lane] = f;
  }
}
