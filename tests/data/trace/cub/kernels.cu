// CUB block primitives in kernels of the project's own (CUB is the CUDA toolkit's; nothing here is
// copied from it): each kernel is what a CUB user writes, one primitive a block. tests/test_trace_cub.py.
#include <cub/cub.cuh>

extern "C" __global__ void radix(const int* in, int* out) {
  using Sort = cub::BlockRadixSort<int, 128, 4>;
  __shared__ typename Sort::TempStorage tmp;
  int keys[4];
  for (int i = 0; i < 4; ++i) keys[i] = in[blockIdx.x * 512 + threadIdx.x * 4 + i];
  Sort(tmp).Sort(keys);
  for (int i = 0; i < 4; ++i) out[blockIdx.x * 512 + threadIdx.x * 4 + i] = keys[i];
}

extern "C" __global__ void scan(const int* in, int* out) {
  using Scan = cub::BlockScan<int, 256>;
  __shared__ typename Scan::TempStorage tmp;
  int v = in[blockIdx.x * 256 + threadIdx.x];
  Scan(tmp).ExclusiveSum(v, v);
  out[blockIdx.x * 256 + threadIdx.x] = v;
}

extern "C" __global__ void load_transpose(const float* in, float* out) {
  using Load = cub::BlockLoad<float, 128, 8, cub::BLOCK_LOAD_TRANSPOSE>;
  using Store = cub::BlockStore<float, 128, 8, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  __shared__ union { typename Load::TempStorage l; typename Store::TempStorage s; } tmp;
  float v[8];
  Load(tmp.l).Load(in + blockIdx.x * 1024, v);
  __syncthreads();
  for (int i = 0; i < 8; ++i) v[i] *= 2.f;
  Store(tmp.s).Store(out + blockIdx.x * 1024, v);
}

extern "C" __global__ void hist(const unsigned char* in, unsigned int* out) {
  using Hist = cub::BlockHistogram<unsigned char, 128, 4, 256, cub::BLOCK_HISTO_ATOMIC>;
  __shared__ typename Hist::TempStorage tmp;
  __shared__ unsigned int bins[256];
  unsigned char v[4];
  for (int i = 0; i < 4; ++i) v[i] = in[blockIdx.x * 512 + threadIdx.x * 4 + i];
  Hist(tmp).Histogram(v, bins);
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += 128) atomicAdd(&out[i], bins[i]);
}

extern "C" __global__ void reduce(const float* in, float* out) {
  using Red = cub::BlockReduce<float, 256>;
  __shared__ typename Red::TempStorage tmp;
  float s = Red(tmp).Sum(in[blockIdx.x * 256 + threadIdx.x]);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

extern "C" __global__ void radix64(const unsigned long long* in, unsigned long long* out) {
  using Sort = cub::BlockRadixSort<unsigned long long, 128, 4, int>;
  __shared__ typename Sort::TempStorage tmp;
  unsigned long long keys[4]; int vals[4];
  for (int i = 0; i < 4; ++i) { keys[i] = in[blockIdx.x * 512 + threadIdx.x * 4 + i]; vals[i] = threadIdx.x * 4 + i; }
  Sort(tmp).SortDescending(keys, vals);
  for (int i = 0; i < 4; ++i) out[blockIdx.x * 512 + threadIdx.x * 4 + i] = keys[i] + vals[i];
}

struct Less { __device__ bool operator()(float a, float b) const { return a < b; } };

extern "C" __global__ void merge_sort(const float* in, float* out) {
  using Sort = cub::BlockMergeSort<float, 128, 4>;
  __shared__ typename Sort::TempStorage tmp;
  float k[4];
  for (int i = 0; i < 4; ++i) k[i] = in[blockIdx.x * 512 + threadIdx.x * 4 + i];
  Sort(tmp).Sort(k, Less());
  for (int i = 0; i < 4; ++i) out[blockIdx.x * 512 + threadIdx.x * 4 + i] = k[i];
}

extern "C" __global__ void warp_scan(const int* in, int* out) {
  using WS = cub::WarpScan<int>;
  __shared__ typename WS::TempStorage tmp[4];
  int v = in[blockIdx.x * 128 + threadIdx.x];
  WS(tmp[threadIdx.x / 32]).InclusiveSum(v, v);
  out[blockIdx.x * 128 + threadIdx.x] = v;
}

extern "C" __global__ void exchange(const double* in, double* out) {
  using Ex = cub::BlockExchange<double, 128, 8>;
  __shared__ typename Ex::TempStorage tmp;
  double v[8];
  for (int i = 0; i < 8; ++i) v[i] = in[blockIdx.x * 1024 + i * 128 + threadIdx.x];
  Ex(tmp).StripedToBlocked(v);
  for (int i = 0; i < 8; ++i) out[blockIdx.x * 1024 + threadIdx.x * 8 + i] = v[i];
}

struct Ne { __device__ bool operator()(int a, int b) const { return a != b; } };
extern "C" __global__ void run_length(const int* in, int* out) {
  using RLD = cub::BlockDiscontinuity<int, 128>;
  __shared__ typename RLD::TempStorage tmp;
  int v[4]; int flags[4];
  for (int i = 0; i < 4; ++i) v[i] = in[blockIdx.x * 512 + threadIdx.x * 4 + i];
  RLD(tmp).FlagHeads(flags, v, Ne());
  for (int i = 0; i < 4; ++i) out[blockIdx.x * 512 + threadIdx.x * 4 + i] = flags[i];
}
