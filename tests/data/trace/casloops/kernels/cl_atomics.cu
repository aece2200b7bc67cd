// shmem's own probes for issue 30 (nothing here is upstream code): how a warp's shared
// compare-and-swap loop (ATOMS.CAST.SPIN) serves lanes whose swap changes nothing, per
// width and kind, and where the warps of a __half2 loop start their loops.
// Every kernel takes (out, zmask, nb, stride, skew, mode); thread t (lane l, warp w) updates
// bins[(t * stride) % nb]; lane l's swap changes nothing when bit l of zmask is set (it adds
// 0, ors 0, ands ~0 ...), otherwise it adds, ors, xors or clears bit t (t < 64), so the old
// value it gets back names the lanes served before it (float and double add 1: the old value
// counts them). Warp w first waits w * skew cycles.
// out[t] = the old value, out[T + t] = the cycle it came back, out[2T + t] = the cycle the
// atomic started (both from the block's start), out[3T + i] = bins[i] (T = block threads).
#include <cuda_fp16.h>

#define PROLOGUE(type, init)                                                            \
  __shared__ type bins[64];                                                            \
  int t = threadIdx.x, T = blockDim.x, l = t % 32, w = t / 32;                         \
  for (int i = t; i < 64; i += T) bins[i] = init;                                      \
  __syncthreads();                                                                     \
  long long t0 = clock64();                                                            \
  if (skew > 0)                                                                        \
    while (clock64() - t0 < (long long)w * skew) {                                     \
    }                                                                                  \
  int at = (t * stride) % nb;                                                          \
  bool z = (zmask >> l) & 1u;                                                          \
  unsigned long long bit = 1ull << (t % 64);                                           \
  long long ts = clock64() - t0;                                                       \
  (void)at, (void)z, (void)bit;

#define EPILOGUE(value)                                                                 \
  out[t] = (value);                                                                    \
  out[T + t] = (unsigned long long)(clock64() - t0);                                   \
  out[2 * T + t] = (unsigned long long)ts;                                             \
  __syncthreads();                                                                     \
  for (int i = t; i < 64; i += T) out[3 * T + i] = bits_of(bins[i]);

__device__ unsigned long long bits_of(unsigned long long v) { return v; }
__device__ unsigned long long bits_of(double v) { return __double_as_longlong(v); }
__device__ unsigned long long bits_of(float v) { return __float_as_uint(v); }
__device__ unsigned long long bits_of(__half2 v) { return *(unsigned *)&v; }

#define ARGS unsigned long long *out, unsigned zmask, int nb, int stride, int skew, int mode

// 64-bit loops: LDS.64, the new value, ATOMS.CAST.SPIN.64
extern "C" __global__ void cl_add64(ARGS) {
  PROLOGUE(unsigned long long, 0ull)
  unsigned long long old = atomicAdd(&bins[at], z ? 0ull : bit);
  EPILOGUE(old)
}
extern "C" __global__ void cl_or64(ARGS) {
  PROLOGUE(unsigned long long, 0ull)
  unsigned long long old = atomicOr(&bins[at], z ? 0ull : bit);
  EPILOGUE(old)
}
extern "C" __global__ void cl_xor64(ARGS) {
  PROLOGUE(unsigned long long, 0ull)
  unsigned long long old = atomicXor(&bins[at], z ? 0ull : bit);
  EPILOGUE(old)
}
extern "C" __global__ void cl_and64(ARGS) {
  PROLOGUE(unsigned long long, ~0ull)
  unsigned long long old = atomicAnd(&bins[at], z ? ~0ull : ~bit);
  EPILOGUE(old)
}
// min and max leave the loop before the swap when it would change nothing; mode 0: the
// values fall in lane order (every lane swaps in turn), mode 1: they rise
extern "C" __global__ void cl_min64(ARGS) {
  PROLOGUE(unsigned long long, ~0ull)
  unsigned long long v = mode ? 1000 + t : 1000 - t;
  unsigned long long old = atomicMin(&bins[at], z ? ~0ull : v);
  EPILOGUE(old)
}
extern "C" __global__ void cl_max64(ARGS) {
  PROLOGUE(unsigned long long, 0ull)
  unsigned long long v = mode ? 1000 + t : 1000 - t;
  unsigned long long old = atomicMax(&bins[at], z ? 0ull : v);
  EPILOGUE(old)
}
extern "C" __global__ void cl_dadd(ARGS) {
  PROLOGUE(double, 0.)
  double old = atomicAdd(&bins[at], z ? 0. : 1.);  // the old value: lanes served before
  EPILOGUE((unsigned long long)old)
}
// 32-bit: LDS, FADD, ATOMS.CAST.SPIN
extern "C" __global__ void cl_fadd(ARGS) {
  PROLOGUE(float, 0.f)
  float old = atomicAdd(&bins[at], z ? 0.f : 1.f);
  EPILOGUE((unsigned long long)old)
}
// __half2: the generic ATOM, QSPC, then the shared loop; mode 1: the old value used
extern "C" __global__ void cl_h2add(ARGS) {
  PROLOGUE(__half2, __floats2half2_rn(0.f, 0.f))
  unsigned long long old = 0;
  __half2 v = z ? __floats2half2_rn(0.f, 0.f) : __floats2half2_rn(1.f, 2.f);
  if (mode) {
    __half2 o = atomicAdd(&bins[at], v);
    old = bits_of(o);
  } else {
    atomicAdd(&bins[at], v);
  }
  EPILOGUE(old)
}

// tests/data/trace/everyday's ev_u64 loops (their values and bins), each loop started by the
// warps together (a barrier before each): mode bit k skips loop k
extern "C" __global__ void cl_u64sync(ARGS) {
  PROLOGUE(unsigned long long, 0ull)
  for (int i = t; i < 64; i += T) bins[i] = 0x100000000ull * (i + 1) + i;
  __syncthreads();
  unsigned long long v = 0x100000001ull * t, old = 0;
  if (!(mode & 1)) old += atomicAdd(&bins[t % nb], v);
  __syncthreads();
  if (!(mode & 2)) old += atomicMin(&bins[(t + 1) % nb], v);
  __syncthreads();
  if (!(mode & 4)) old += atomicMax(&bins[(t + 2) % nb], v);
  __syncthreads();
  if (!(mode & 8)) old += atomicAnd(&bins[(t + 3) % nb], ~v);
  __syncthreads();
  if (!(mode & 16)) old += atomicOr(&bins[(t + 4) % nb], v << 3);
  __syncthreads();
  if (!(mode & 32)) old += atomicXor(&bins[(t + 5) % nb], v * 7);
  EPILOGUE(old)
}

// ev_h2add's shape (the atomic right after the barrier, its address made before), with the
// clock read after the barrier and after the atomic: out[t] = the cycle after the barrier,
// out[T + t] = the cycle after the atomic (SM clock, absolute), out[2T + t] = 0
extern "C" __global__ void cl_h2ev(ARGS) {
  __shared__ __half2 bins[64];
  int t = threadIdx.x, T = blockDim.x;
  __half2 *p = &bins[t % nb];
  for (int i = t; i < 64; i += T) bins[i] = __floats2half2_rn(0.f, 0.f);
  __syncthreads();
  long long t0 = clock64();
  atomicAdd(p, __floats2half2_rn(1.f, 2.f));
  long long t1 = clock64();
  out[t] = (unsigned long long)t0;
  out[T + t] = (unsigned long long)t1;
  out[2 * T + t] = 0;
  __syncthreads();
  for (int i = t; i < 64; i += T) out[3 * T + i] = bits_of(bins[i]);
  (void)zmask, (void)stride, (void)skew, (void)mode;
}
// the same for ev_fadd's float loop
extern "C" __global__ void cl_fev(ARGS) {
  __shared__ float bins[64];
  int t = threadIdx.x, T = blockDim.x;
  float *p = &bins[t % nb];
  for (int i = t; i < 64; i += T) bins[i] = 0.f;
  __syncthreads();
  long long t0 = clock64();
  atomicAdd(p, (float)t);
  long long t1 = clock64();
  out[t] = (unsigned long long)t0;
  out[T + t] = (unsigned long long)t1;
  out[2 * T + t] = 0;
  __syncthreads();
  for (int i = t; i < 64; i += T) out[3 * T + i] = bits_of(bins[i]);
  (void)zmask, (void)stride, (void)skew, (void)mode;
}
// ev_u64's six loops as there (no barrier between them), the SM clock read after each:
// out[t] = the old values summed, out[(k + 1) T + t] = the cycle after loop k (k < 6),
// out[7T + i] = bins[i]
extern "C" __global__ void cl_u64ev(ARGS) {
  __shared__ unsigned long long bins[64];
  int t = threadIdx.x, T = blockDim.x;
  for (int i = t; i < 64; i += T) bins[i] = 0x100000000ull * (i + 1) + i;
  __syncthreads();
  unsigned long long v = 0x100000001ull * t, old = 0;
  long long c[6];
  old += atomicAdd(&bins[t % nb], v);
  c[0] = clock64();
  old += atomicMin(&bins[(t + 1) % nb], v);
  c[1] = clock64();
  old += atomicMax(&bins[(t + 2) % nb], v);
  c[2] = clock64();
  old += atomicAnd(&bins[(t + 3) % nb], ~v);
  c[3] = clock64();
  old += atomicOr(&bins[(t + 4) % nb], v << 3);
  c[4] = clock64();
  old += atomicXor(&bins[(t + 5) % nb], v * 7);
  c[5] = clock64();
  out[t] = old;
  for (int k = 0; k < 6; k++) out[(k + 1) * T + t] = (unsigned long long)c[k];
  __syncthreads();
  for (int i = t; i < 64; i += T) out[7 * T + i] = bins[i];
  (void)zmask, (void)stride, (void)skew, (void)mode;
}
