// A kernel whose demangled name is longer than any terminal (C++ templates, as in CuTe):
// `shmem trace --list-params` must still print it. Nested pairs make the name ~1,500 chars.
template <class A, class B> struct Pair {};
using P1 = Pair<Pair<int, float>, Pair<unsigned, double>>;
using P2 = Pair<Pair<P1, P1>, Pair<P1, P1>>;
using P3 = Pair<Pair<P2, P2>, Pair<P2, P2>>;

template <class Tag>
__global__ void tagged_copy(float *out, const float *in, int n) {
  __shared__ float s[128];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x * 3) % 128] * n;
}
template __global__ void tagged_copy<P3>(float *, const float *, int);
