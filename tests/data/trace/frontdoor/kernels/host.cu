// The project's own host program for issue 29 (runtime API, as an application launches):
// tiles copied with the tile header library (include/tile), a constant table set with cudaMemcpyToSymbol, and a Params struct whose bytes
// are written to a file just before each launch (docs/recipes.md's shmem_dump).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "tile_columns.cu"
#include "const_table.cu"
#include "params_kernel.cu"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); std::exit(1); } } while (0)

template <class T> void shmem_dump(const char *path, T const &params) {
  if (FILE *f = std::fopen(path, "wb")) { std::fwrite(&params, sizeof(T), 1, f); std::fclose(f); }
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[512];
  // 1. the tiles, row-major and swizzled
  std::vector<__half> h(64 * 64);
  for (int i = 0; i < 64 * 64; ++i) h[i] = __float2half(float(i % 251));
  __half *din, *dout;
  CK(cudaMalloc(&din, h.size() * sizeof(__half)));
  CK(cudaMalloc(&dout, h.size() * sizeof(__half)));
  CK(cudaMemcpy(din, h.data(), h.size() * sizeof(__half), cudaMemcpyHostToDevice));
  tile_columns<Plain><<<1, 128>>>(din, dout);
  CK(cudaDeviceSynchronize());
  tile_columns<Swizzled><<<1, 128>>>(din, dout);
  CK(cudaDeviceSynchronize());
  std::vector<__half> back(h.size());
  CK(cudaMemcpy(back.data(), dout, back.size() * sizeof(__half), cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (size_t i = 0; i < h.size(); ++i) wrong += __half2float(back[i]) != __half2float(h[i]);
  std::printf("tile_columns: %d of %zu halves copied wrong\n", wrong, h.size());
  std::snprintf(path, sizeof path, "%s/tile_in.bin", dir);
  if (FILE *f = std::fopen(path, "wb")) { std::fwrite(h.data(), sizeof(__half), h.size(), f); std::fclose(f); }
  // 2. the constant table: strides set by the host
  int strides_h[4] = {1, 2, 32, 33};
  CK(cudaMemcpyToSymbol(strides, strides_h, sizeof strides_h));
  float *dacc;
  CK(cudaMalloc(&dacc, 128 * sizeof(float)));
  const_table<<<1, 128>>>(dacc);
  CK(cudaDeviceSynchronize());
  std::snprintf(path, sizeof path, "%s/const_strides.bin", dir);
  if (FILE *f = std::fopen(path, "wb")) { std::fwrite(strides_h, sizeof(int), 4, f); std::fclose(f); }
  // 3. one Params struct by value, its bytes dumped where the kernel is launched
  float *pin, *pout;
  CK(cudaMalloc(&pin, 32 * 64 * sizeof(float)));
  CK(cudaMalloc(&pout, 32 * 64 * sizeof(float)));
  CK(cudaMemset(pin, 0, 32 * 64 * sizeof(float)));
  int lds[3] = {32, 33, 34};
  for (int k = 0; k < 3; ++k) {
    Params p{pin, pout, 64, lds[k], k};
    dim3 grid(1), block(32, 32);
    std::snprintf(path, sizeof path, "%s/params_ld%d.bin", dir, lds[k]);
    shmem_dump(path, p);
    std::printf("params_kernel ld %d: grid %d,%d,%d block %d,%d,%d smem 0, params %zu bytes, in %p\n",
                lds[k], grid.x, grid.y, grid.z, block.x, block.y, block.z, sizeof p, (void *)pin);
    params_kernel<<<grid, block>>>(p);
    CK(cudaDeviceSynchronize());
  }
  std::printf("ok\n");
  return 0;
}
