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
