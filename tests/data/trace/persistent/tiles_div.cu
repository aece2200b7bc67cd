// A persistent tile loop whose tile index is split by a runtime divisor (issue 30,
// shmem_cli/trace/emulator/alike/guarded.py): block b takes tiles b, b + gridDim.x, ... below
// ntiles, and t % tiles_m, t / tiles_m are nvcc's division by a runtime value, whose
// correction steps run under guards on the block index (@!P2 IMAD.IADD, @P1 VIADD). Each tile
// of 32 x 32 floats is copied through shared memory with one padding column: 4 row stores and
// 4 column loads a warp (8 warps), 1 wavefront each. Only global places differ between blocks
// of one trip count.
// tiles_div_odd reads an odd row's tiles with no padding (32-way column loads): the quotient
// the guards chose decides shared addresses there, so the blocks split by their rows' parity.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o tiles_div.sm_90.cubin tiles_div.cu
template <bool ODD>
__device__ __forceinline__ void walk(float *out, const float *in, int tiles_m, int ntiles) {
  __shared__ float tile[32 * 33];
  for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
    int m = t % tiles_m, n = t / tiles_m;
    int pitch = ODD && (n & 1) ? 32 : 33;
    const float *src = in + (n * 32 * tiles_m + m) * 32;
    for (int j = 0; j < 32; j += 8)
      tile[(threadIdx.y + j) * pitch + threadIdx.x] = src[(threadIdx.y + j) * 32 * tiles_m + threadIdx.x];
    __syncthreads();
    float *dst = out + (m * 32 * tiles_m + n) * 32;
    for (int j = 0; j < 32; j += 8)
      dst[(threadIdx.y + j) * 32 * tiles_m + threadIdx.x] = tile[threadIdx.x * pitch + threadIdx.y + j];
    __syncthreads();
  }
}

extern "C" __global__ void tiles_div(float *out, const float *in, int tiles_m, int ntiles) {
  walk<false>(out, in, tiles_m, ntiles);
}

extern "C" __global__ void tiles_div_odd(float *out, const float *in, int tiles_m, int ntiles) {
  walk<true>(out, in, tiles_m, ntiles);
}
