// Parameters passed by value that hold nothing (empty classes, as CuTe and the standard
// library pass static shapes and flags) beside ones that hold a value.
#include <type_traits>

struct Tag {};  // an empty class: one byte in the parameter block, never read

template <bool Flip>
__global__ void empty_params(float* out, Tag tag, std::integral_constant<bool, Flip> flip,
                             bool negate, int n, float unused_scale) {
  __shared__ float tile[64];
  int i = threadIdx.x;
  tile[i] = Flip ? float(n - i) : float(i);
  __syncthreads();
  float v = tile[63 - i];
  out[i] = negate ? -v : v;
}

template __global__ void empty_params<true>(float*, Tag, std::integral_constant<bool, true>, bool,
                                            int, float);

// A pointer of a real run's parameter block next to a buffer shmem makes up: out comes in
// --params (an address a host process can have), in from --arg @FILE.
__global__ void through_params(float* out, const float* in) {
  __shared__ float tile[64];
  int i = threadIdx.x;
  tile[i] = in[i];
  __syncthreads();
  out[i] = 2.0f * tile[63 - i];
}

// A Params struct by value and a count after it, as FlashAttention-2 launches
// flash_bwd_convert_dq_kernel(params, nsplits): the host program dumps sizeof(Params).
struct Params {
  float* out;
  const float* in;
  int n;
};

__global__ void params_then_count(Params p, int nsplits) {
  __shared__ float tile[64 * 4];
  int i = threadIdx.x;
  for (int s = 0; s < nsplits; ++s) tile[i * 4 + s] = p.in[s * p.n + i];
  __syncthreads();
  float acc = 0.0f;
  for (int s = 0; s < nsplits; ++s) acc += tile[i * 4 + s];
  p.out[i] = acc;
}

// A long main loop, as a GEMM's over K: each thread runs about 300,000 instructions (CuTe's
// sgemm_2 tutorial at its own 5120 x 5120 x 4096 runs 351,000 a thread).
__global__ void long_loop(float* out, int n) {
  volatile __shared__ float acc[32];
  int i = threadIdx.x;
  acc[i] = 0.0f;
  for (int k = 0; k < n; ++k) acc[i] = acc[i] + float(k & 7);
  out[i] = acc[i];
}
