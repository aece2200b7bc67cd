// A small copy library for tests/test_inline_siblings.py: three levels of force-inlined
// templates down to one ldmatrix, as CuTe's copy -> copy_atom -> copy_unpack -> LDSM.
#pragma once
#include <cstdint>

namespace tiles {
struct Ldsm4 {
  __device__ __forceinline__ static void load(uint32_t smem, uint32_t *r) {
    asm volatile("ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem));
  }
};
template <class Op>
__device__ __forceinline__ void unpack(const uint16_t *src, uint32_t *dst) {
  uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(src));
  Op::load(s, dst);
}
template <class Op>
__device__ __forceinline__ void atom(const uint16_t *src, uint32_t *dst) {
  unpack<Op>(src, dst);
}
template <class Op>
__device__ __forceinline__ void copy(const uint16_t *src, uint32_t *dst, int n) {
  for (int i = 0; i < n; ++i) atom<Op>(src + i * 512, dst + 4 * i);
}
}  // namespace tiles
