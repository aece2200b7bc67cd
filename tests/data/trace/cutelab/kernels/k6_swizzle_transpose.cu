// transpose through a 32x32 float smem tile, plain and with a cute::Swizzle<5,0,5> layout
#include <cute/tensor.hpp>
using namespace cute;

template <bool Swizzled>
__global__ void transpose(float const* in, float* out, int n) {
  using Base = Layout<Shape<_32, _32>, Stride<_32, _1>>;
  using SmemLayout = std::conditional_t<Swizzled, ComposedLayout<Swizzle<5, 0, 5>, _0, Base>, Base>;
  __shared__ float smem[1024];
  Tensor s = make_tensor(make_smem_ptr(smem), SmemLayout{});
  Tensor mIn = make_tensor(make_gmem_ptr(in), make_shape(n, n), make_stride(n, _1{}));
  Tensor mOut = make_tensor(make_gmem_ptr(out), make_shape(n, n), make_stride(n, _1{}));
  Tensor gIn = local_tile(mIn, Shape<_32, _32>{}, make_coord(blockIdx.y, blockIdx.x));
  Tensor gOut = local_tile(mOut, Shape<_32, _32>{}, make_coord(blockIdx.x, blockIdx.y));
  for (int r = threadIdx.y; r < 32; r += blockDim.y) s(r, threadIdx.x) = gIn(r, threadIdx.x);
  __syncthreads();
  for (int r = threadIdx.y; r < 32; r += blockDim.y) gOut(r, threadIdx.x) = s(threadIdx.x, r);
}
template __global__ void transpose<false>(float const*, float*, int);
template __global__ void transpose<true>(float const*, float*, int);
