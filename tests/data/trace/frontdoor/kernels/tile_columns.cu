// shmem's own kernel for issue 29, written as a user of the header library in include/tile:
// a 64x64 half tile copied into shared memory with cp.async (tile::copy), then read down its
// columns (each lane a row), in two layouts: row-major (every lane of a warp in one bank)
// and with an XOR swizzle (tile::Xor<3, 3, 3>, the chunk of a row moved by the row).
#include <cuda_fp16.h>
#include <tile/tile.hpp>

using Plain = tile::RowMajor<64, 64>;
using Swizzled = tile::Swizzled<Plain, tile::Xor<3, 3, 3>>;

template <class SmemLayout>
__global__ void tile_columns(__half const *in, __half *out) {
  __shared__ alignas(128) __half smem[SmemLayout::size];
  auto gA = tile::view<Plain>(in);
  auto sA = tile::view<SmemLayout>(smem);
  tile::copy<128, 64, 64>(gA, sA, threadIdx.x);
  tile::cp_async_commit();
  tile::cp_async_wait_all();
  __syncthreads();
  auto gB = tile::view<Plain>(out);
  int row = threadIdx.x % 64, first = (threadIdx.x / 64) * 32;
  for (int c = 0; c < 32; ++c) {
    gB(row, first + c) = sA(row, first + c);  // a column read: lanes on consecutive rows
  }
}

template __global__ void tile_columns<Plain>(__half const *, __half *);
template __global__ void tile_columns<Swizzled>(__half const *, __half *);
