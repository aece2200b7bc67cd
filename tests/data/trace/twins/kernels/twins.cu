// Two instantiations of one kernel whose names agree for hundreds of characters, mangled and
// demangled, and differ deep inside their template arguments, as CuTe's NT and TN GEMMs of
// one tutorial do: what tells them apart in --kernel's list.
template <int N> struct C {};
template <class... T> struct L {};
using Lead = L<C<1>, C<2>, C<3>, C<4>, C<5>, C<6>, C<7>, C<8>, C<9>, C<10>, C<11>, C<12>,
               C<13>, C<14>, C<15>, C<16>, C<17>, C<18>, C<19>, C<20>>;
using Tail = L<C<64>, C<128>, C<256>>;

template <class Head, class Mode, class Rest>
__global__ void twin_copy(float *out, const float *in) {
  __shared__ float s[128];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[(threadIdx.x * sizeof(Mode)) % 128];
}
template __global__ void twin_copy<Lead, L<C<1>, char>, Tail>(float *, const float *);
template __global__ void twin_copy<Lead, L<C<2>, short>, Tail>(float *, const float *);
