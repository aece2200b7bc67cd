// tile/copy.hpp: a global tile copied into shared memory by cp.async, 16 bytes a thread at a
// time, and the waits that go with it.
#pragma once

namespace tile {

// one 16-byte cp.async, cached at every level
__device__ __forceinline__ void cp_async_16(void *smem, void const *gmem) {
  unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(addr), "l"(gmem));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n"); }

__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

// Threads threads copy a Rows x Cols tile: each thread moves 16-byte chunks, a row of
// chunks per Cols / (16 / sizeof(T)) threads, and the block walks down the rows.
template <int Threads, int Rows, int Cols, class T, class SrcLayout, class DstLayout>
__device__ __forceinline__ void copy(View<T const, SrcLayout> src, View<T, DstLayout> dst,
                                     int thread) {
  constexpr int per_chunk = 16 / sizeof(T);
  constexpr int chunks_per_row = Cols / per_chunk;
  constexpr int rows_per_step = Threads / chunks_per_row;
  int row = thread / chunks_per_row, col = (thread % chunks_per_row) * per_chunk;
#pragma unroll
  for (int step = 0; step < Rows / rows_per_step; ++step) {
    int r = row + step * rows_per_step;
    cp_async_16(&dst(r, col), &src(r, col));
  }
}

}  // namespace tile
