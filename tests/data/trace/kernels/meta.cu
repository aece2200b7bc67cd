// Kernels for shmem's cubin-metadata tests (tests/test_trace_cubin.py): a template, a struct
// passed by value, an extern "C" kernel with dynamic shared memory, and no shared memory at all.
struct Dims {
  int m, n, k;
};

template <int TILE, typename T>
__global__ void tiled_copy(T *__restrict__ out, const T *in, int rows, float scale) {
  __shared__ T tile[TILE][TILE + 1];
  int x = threadIdx.x, y = threadIdx.y;
  tile[y][x] = in[y * TILE + x];
  __syncthreads();
  out[y * TILE + x] = tile[x][y] * static_cast<T>(scale) + static_cast<T>(rows);
}

template __global__ void tiled_copy<32, float>(float *, const float *, int, float);
template __global__ void tiled_copy<16, double>(double *, const double *, int, float);

extern "C" __global__ void by_value(Dims d, float *out) {
  extern __shared__ float dyn[];
  dyn[threadIdx.x] = static_cast<float>(d.m * d.n + d.k);
  __syncthreads();
  out[threadIdx.x] = dyn[(threadIdx.x + 1) % blockDim.x];
}

__global__ void no_shared(float *p, unsigned n) {
  if (threadIdx.x < n) p[threadIdx.x] += 1.0f;
}
