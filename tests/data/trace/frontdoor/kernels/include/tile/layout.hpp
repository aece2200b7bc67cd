// tile/layout.hpp: where element (row, col) of a tile lives, in elements from its start.
#pragma once

namespace tile {

// rows of Cols elements, one after another
template <int Rows, int Cols>
struct RowMajor {
  static constexpr int size = Rows * Cols;
  static __device__ __forceinline__ int offset(int row, int col) { return row * Cols + col; }
};

// an XOR swizzle of an offset: the Bits bits above Base + Shift flip the Bits bits above
// Base (with Bits = Base = Shift = 3 on 2-byte elements: the row's low three bits pick
// which 16-byte chunk of a 128-byte row an element's chunk lands in)
template <int Bits, int Base, int Shift>
struct Xor {
  static constexpr int mask = ((1 << Bits) - 1) << (Base + Shift);
  static __device__ __forceinline__ int apply(int offset) {
    return offset ^ ((offset & mask) >> Shift);
  }
};

// a layout whose offsets are swizzled
template <class Inner, class Swizzle>
struct Swizzled {
  static constexpr int size = Inner::size;
  static __device__ __forceinline__ int offset(int row, int col) {
    return Swizzle::apply(Inner::offset(row, col));
  }
};

}  // namespace tile
