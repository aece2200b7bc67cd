// A TMA load whose tensor map lies inside a struct passed by value, as CuTe's TMA copy atoms
// (`Copy_Atom<Copy_Traits<SM90_TMA_LOAD, ...>>`) and CUTLASS's Params hold theirs: the map at
// +0, more fields after it. Each block loads a 32 x 32 float tile and reads it by columns.
#include <cuda.h>
#include <cstdint>

struct MapAtom {
  CUtensorMap map;  // 128 bytes, 64-byte aligned
  int rows;         // a field after it, as a copy atom's auxiliary parameters
};

__global__ void atom_copy(const __grid_constant__ MapAtom atom, float *out) {
  __shared__ __align__(128) float tile[32 * 32];
  __shared__ __align__(8) uint64_t bar;
  unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned t = (unsigned)__cvta_generic_to_shared(tile);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 4096;" ::"r"(b) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(t), "l"(&atom.map), "r"(0),
        "r"((int)blockIdx.x * 32), "r"(b) : "memory");
  }
  asm volatile(
      "{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W; }"
      ::"r"(b) : "memory");
  unsigned lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  out[blockIdx.x * 1024 + threadIdx.x] = tile[lane * 32 + w] * (float)atom.rows;  // by columns
}
