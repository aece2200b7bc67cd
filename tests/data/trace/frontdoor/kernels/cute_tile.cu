// shmem's own CuTe kernel for issue 29: a 64x64 half tile copied into shared memory by a CuTe
// TiledCopy of cp.async atoms, then read down its columns (each lane a row), in two layouts:
// row-major (every lane of a warp in one bank) and with CuTe's Swizzle<3,3,3>.
#include <cute/tensor.hpp>

using namespace cute;

using TileShape = Shape<_64, _64>;
using Plain = Layout<TileShape, Stride<_64, _1>>;
using Swizzled = decltype(composition(Swizzle<3, 3, 3>{}, Plain{}));

template <class SmemLayout>
__global__ void cute_tile(half_t const *in, half_t *out) {
  __shared__ alignas(128) half_t smem[cosize_v<SmemLayout>];
  Tensor gA = make_tensor(make_gmem_ptr(in), Plain{});
  Tensor sA = make_tensor(make_smem_ptr(smem), SmemLayout{});
  auto copy_a = make_tiled_copy(Copy_Atom<SM80_CP_ASYNC_CACHEALWAYS<uint128_t>, half_t>{},
                                Layout<Shape<_16, _8>, Stride<_8, _1>>{},  // 128 threads
                                Layout<Shape<_1, _8>>{});                   // 8 halves each
  auto thr = copy_a.get_slice(threadIdx.x);
  copy(copy_a, thr.partition_S(gA), thr.partition_D(sA));
  cp_async_fence();
  cp_async_wait<0>();
  __syncthreads();
  Tensor gB = make_tensor(make_gmem_ptr(out), Plain{});
  int row = threadIdx.x % 64, first = (threadIdx.x / 64) * 32;
  for (int c = 0; c < 32; ++c) {
    gB(row, first + c) = sA(row, first + c);  // a column read: lanes on consecutive rows
  }
}

template __global__ void cute_tile<Plain>(half_t const *, half_t *);
template __global__ void cute_tile<Swizzled>(half_t const *, half_t *);
