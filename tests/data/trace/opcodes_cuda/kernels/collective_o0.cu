// Issues 29/30: ptxas at -O0 writes each warp-collective instruction as a collective
// section (WARPSYNC.COLLECTIVE mask, label ... ENDCOLLECTIVE), as CUTLASS's elect.sync
// fallbacks are written at every level; the warps here are divergent (a branch on the data
// splits them), so each section runs for part of a warp. The project's own code.
// Build: nvcc -cubin -lineinfo -Xptxas -O0 -arch=sm_90 -o ../collective.sm_90.cubin collective_o0.cu
// and, for a debug build (every device function a function of its own, called and returned
// from): nvcc -cubin -G -arch=sm_90 -o ../collective_debug.sm_90.cubin collective_o0.cu
#include <cstdint>

extern "C" __global__ void collective(unsigned *out, const unsigned *in) {
  int t = threadIdx.x;
  unsigned x = in[t], r = 0;
  if (x & 1) {
    unsigned m = __activemask();
    r = __reduce_add_sync(m, x) + __shfl_sync(m, x, 31 - (t & 31)) + __ballot_sync(m, x & 2);
    r ^= __match_any_sync(m, x & 12) << 1;
    unsigned e;
    asm volatile("{ .reg .pred p; elect.sync %0|p, %1; }" : "=r"(e) : "r"(m));
    r += e * 7;
  } else {
    unsigned m = __activemask();
    r = __reduce_max_sync(m, x) ^ __shfl_xor_sync(m, x, 1);
    __syncwarp(m);
  }
  out[t] = r + __reduce_or_sync(0xffffffffu, x);
}

// cooperative groups' tiles at -O0: a tile's sync, shuffles and reductions are collective
// sections too (a tile's barrier is BAR.SYNC with its id and count in a register)
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cg_tiles(unsigned *out, const unsigned *in) {
  auto block = cg::this_thread_block();
  auto tile = cg::tiled_partition<8>(block);
  __shared__ unsigned stage[64];
  unsigned x = in[threadIdx.x];
  stage[threadIdx.x] = x * 3;
  tile.sync();
  unsigned r = cg::reduce(tile, x, cg::plus<unsigned>()) + tile.shfl_down(x, 1);
  r += stage[tile.meta_group_rank() * 8 + (tile.thread_rank() + 1) % 8];
  if (x & 1) {
    auto active = cg::coalesced_threads();
    r ^= cg::reduce(active, x, cg::greater<unsigned>()) + (active.thread_rank() << 8);
  }
  block.sync();
  out[threadIdx.x] = r;
}
