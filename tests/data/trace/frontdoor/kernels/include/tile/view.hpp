// tile/view.hpp: a tile of memory seen through a layout.
#pragma once

namespace tile {

template <class T, class Layout>
struct View {
  T *data;
  __device__ __forceinline__ T &operator()(int row, int col) const {
    return data[Layout::offset(row, col)];
  }
};

template <class Layout, class T>
__device__ __forceinline__ View<T, Layout> view(T *data) {
  return View<T, Layout>{data};
}

}  // namespace tile
