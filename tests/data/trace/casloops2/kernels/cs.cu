// shmem's own probes for issue 30's open compare-and-swap counts (nothing here is upstream
// code). Every kernel takes (out, zmask, nb, split, mode, poff, hoff).
// cs_add64 and cs_u64sync repeat tests/data/trace/casloops' cl_add64 (stride 1, no skew) and
// cl_u64sync; with split = 1 warp 1 runs its own copy of each loop (the _block form of the
// same atomic, which on shared memory is the same LDS.64 + ATOMS.CAST.SPIN.64 loop at other
// pcs), so that Nsight Compute's per-instruction counters give each warp's executions, lanes
// and wavefronts apart. split = 0 is the casloops kernel again (the control).
// out[t] = the old value (u64sync: the old values summed), out[T + t] = the cycle it came
// back, out[2T + t] = the cycle it started (from the block's start), out[3T + i] = bins[i].
// cs_lds64: one LDS.64 (outside any loop) of lanes whose bit of zmask is set, lane l reading
// the double bins[((l & 1) * poff + (l >> 4) * hoff + ((l >> 1) & 7) * mode) % 64]: the pair
// rule's corner of atomloops' dadd_bank_pairs without the loop around it.

extern "C" __global__ void cs_add64(unsigned long long *out, unsigned zmask, int nb, int split,
                                    int mode, int poff, int hoff) {
  __shared__ unsigned long long bins[64];
  int t = threadIdx.x, T = blockDim.x, l = t % 32, w = t / 32;
  for (int i = t; i < 64; i += T) bins[i] = 0ull;
  __syncthreads();
  long long t0 = clock64();
  int at = t % nb;
  bool z = (zmask >> l) & 1u;
  unsigned long long v = z ? 0ull : 1ull << (t % 64), old;
  long long ts = clock64() - t0;
  if (split && w == 1)
    old = atomicAdd_block(&bins[at], v);
  else
    old = atomicAdd(&bins[at], v);
  out[t] = old;
  out[T + t] = (unsigned long long)(clock64() - t0);
  out[2 * T + t] = (unsigned long long)ts;
  __syncthreads();
  for (int i = t; i < 64; i += T) out[3 * T + i] = bins[i];
  (void)mode, (void)poff, (void)hoff;
}

#define SPLIT(op, p, x) ((split && w == 1) ? op##_block(p, x) : op(p, x))

extern "C" __global__ void cs_u64sync(unsigned long long *out, unsigned zmask, int nb,
                                      int split, int mode, int poff, int hoff) {
  __shared__ unsigned long long bins[64];
  int t = threadIdx.x, T = blockDim.x, w = t / 32;
  for (int i = t; i < 64; i += T) bins[i] = 0x100000000ull * (i + 1) + i;
  __syncthreads();
  long long t0 = clock64();
  unsigned long long v = 0x100000001ull * t, old = 0;
  if (!(mode & 1)) old += SPLIT(atomicAdd, &bins[t % nb], v);
  __syncthreads();
  if (!(mode & 2)) old += SPLIT(atomicMin, &bins[(t + 1) % nb], v);
  __syncthreads();
  if (!(mode & 4)) old += SPLIT(atomicMax, &bins[(t + 2) % nb], v);
  __syncthreads();
  if (!(mode & 8)) old += SPLIT(atomicAnd, &bins[(t + 3) % nb], ~v);
  __syncthreads();
  if (!(mode & 16)) old += SPLIT(atomicOr, &bins[(t + 4) % nb], v << 3);
  __syncthreads();
  if (!(mode & 32)) old += SPLIT(atomicXor, &bins[(t + 5) % nb], v * 7);
  out[t] = old;
  out[T + t] = (unsigned long long)(clock64() - t0);
  out[2 * T + t] = 0;
  __syncthreads();
  for (int i = t; i < 64; i += T) out[3 * T + i] = bins[i];
  (void)zmask, (void)poff, (void)hoff;
}

extern "C" __global__ void cs_lds64(unsigned long long *out, unsigned zmask, int nb, int split,
                                    int mode, int poff, int hoff) {
  __shared__ double bins[64];
  int t = threadIdx.x, T = blockDim.x, l = t % 32;
  for (int i = t; i < 64; i += T) bins[i] = (double)i;
  __syncthreads();
  double v = -1.;
  if ((zmask >> l) & 1u) v = bins[((l & 1) * poff + (l >> 4) * hoff + ((l >> 1) & 7) * mode) % 64];
  out[t] = __double_as_longlong(v);
  out[T + t] = 0;
  out[2 * T + t] = 0;
  __syncthreads();
  for (int i = t; i < 64; i += T) out[3 * T + i] = __double_as_longlong(bins[i]);
  (void)nb, (void)split;
}
