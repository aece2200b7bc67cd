#include <cub/cub.cuh>
template <int T, cub::BlockReduceAlgorithm A>
__global__ void k_reduce(float *out, const float *in) {
  using R = cub::BlockReduce<float, T, A>;
  __shared__ typename R::TempStorage tmp;
  float v = in[threadIdx.x];
  float s = R(tmp).Sum(v);
  if (threadIdx.x == 0) out[0] = s;
}
template __global__ void k_reduce<256, cub::BLOCK_REDUCE_WARP_REDUCTIONS>(float *, const float *);
template __global__ void k_reduce<256, cub::BLOCK_REDUCE_RAKING>(float *, const float *);
template __global__ void k_reduce<256, cub::BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY>(float *, const float *);

template <int T, int I, cub::BlockScanAlgorithm A>
__global__ void k_scan(int *out, const int *in) {
  using S = cub::BlockScan<int, T, A>;
  __shared__ typename S::TempStorage tmp;
  int v[I];
  for (int i = 0; i < I; ++i) v[i] = in[threadIdx.x * I + i] & 0xff;
  S(tmp).InclusiveSum(v, v);
  for (int i = 0; i < I; ++i) out[threadIdx.x * I + i] = v[i];
}
template __global__ void k_scan<128, 4, cub::BLOCK_SCAN_RAKING>(int *, const int *);
template __global__ void k_scan<128, 4, cub::BLOCK_SCAN_WARP_SCANS>(int *, const int *);
template __global__ void k_scan<256, 1, cub::BLOCK_SCAN_RAKING_MEMOIZE>(int *, const int *);

template <int T, int I, cub::BlockLoadAlgorithm L, cub::BlockStoreAlgorithm S>
__global__ void k_loadstore(int *out, const int *in) {
  using BL = cub::BlockLoad<int, T, I, L>;
  using BS = cub::BlockStore<int, T, I, S>;
  __shared__ union { typename BL::TempStorage l; typename BS::TempStorage s; } tmp;
  int v[I];
  BL(tmp.l).Load(in, v);
  for (int i = 0; i < I; ++i) v[i] += 1;
  __syncthreads();
  BS(tmp.s).Store(out, v);
}
template __global__ void k_loadstore<128, 4, cub::BLOCK_LOAD_TRANSPOSE, cub::BLOCK_STORE_TRANSPOSE>(int *, const int *);
template __global__ void k_loadstore<128, 8, cub::BLOCK_LOAD_WARP_TRANSPOSE, cub::BLOCK_STORE_WARP_TRANSPOSE>(int *, const int *);
template __global__ void k_loadstore<128, 4, cub::BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED, cub::BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED>(int *, const int *);

template <int T, int I>
__global__ void k_radix(unsigned *out, const unsigned *in) {
  using RS = cub::BlockRadixSort<unsigned, T, I>;
  __shared__ typename RS::TempStorage tmp;
  unsigned k[I];
  for (int i = 0; i < I; ++i) k[i] = in[threadIdx.x * I + i];
  RS(tmp).Sort(k);
  for (int i = 0; i < I; ++i) out[threadIdx.x * I + i] = k[i];
}
template __global__ void k_radix<128, 4>(unsigned *, const unsigned *);

template <int T, int I, cub::BlockHistogramAlgorithm A>
__global__ void k_histo(unsigned *out, const unsigned *in) {
  using H = cub::BlockHistogram<unsigned char, T, I, 256, A>;
  __shared__ typename H::TempStorage tmp;
  __shared__ unsigned hist[256];
  unsigned char s[I];
  for (int i = 0; i < I; ++i) s[i] = (unsigned char)(in[threadIdx.x * I + i] >> 8);
  H(tmp).Histogram(s, hist);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += T) out[i] = hist[i];
}
template __global__ void k_histo<128, 4, cub::BLOCK_HISTO_ATOMIC>(unsigned *, const unsigned *);
template __global__ void k_histo<128, 4, cub::BLOCK_HISTO_SORT>(unsigned *, const unsigned *);

template <int T, int I, bool TS>
__global__ void k_exchange(int *out, const int *in) {
  using E = cub::BlockExchange<int, T, I, TS>;
  __shared__ typename E::TempStorage tmp;
  int v[I];
  for (int i = 0; i < I; ++i) v[i] = in[i * T + threadIdx.x];
  E(tmp).StripedToBlocked(v);
  for (int i = 0; i < I; ++i) out[threadIdx.x * I + i] = v[i];
}
template __global__ void k_exchange<128, 4, false>(int *, const int *);
template __global__ void k_exchange<128, 8, true>(int *, const int *);
