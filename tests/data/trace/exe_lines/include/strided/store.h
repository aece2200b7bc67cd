// A header library of the project's own, standing in for CUTLASS or CuTe in an executable's
// line table (tests/test_trace_exe_lines.py): two levels of force-inlined templates down to
// one shared-memory store at a stride of STRIDE words.
#pragma once

namespace strided {
template <int STRIDE>
__device__ __forceinline__ void put(float *smem, int lane, float v) {
  smem[lane * STRIDE] = v;  // STRIDE 2: lanes l and l + 16 share a bank
}
template <int STRIDE>
__device__ __forceinline__ void store(float *smem, int lane, float v) {
  put<STRIDE>(smem, lane, v);
}
}  // namespace strided
