// shmem's own kernels for issue 30: guards on the block index that the proof of alike
// blocks (shmem_cli/trace/emulator/alike/affine.py) must accept or refuse.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 -o alike.sm_90.cubin alike.cu
#define N 256

// refused: i = blockIdx.x * 2^30 + threadIdx.x wraps negative from block 2 on, so the
// 4-way store runs in blocks 0 and 1 only
extern "C" __global__ void al_wrap(float *out) {
  __shared__ float tile[N];
  int i = (int)(blockIdx.x * 0x40000000u) + (int)threadIdx.x;
  tile[threadIdx.x] = 0.f;
  __syncthreads();
  if (i >= 0) tile[(threadIdx.x * 4) % N] = 1.f;
  __syncthreads();
  out[blockIdx.x * N + threadIdx.x] = tile[threadIdx.x];
}

// accepted: j = blockIdx.x - shift is -1 in block 0 (0xffffffff as unsigned bits), and
// j < limit holds in every block of a grid shorter than limit + shift; refused where it
// does not (a grid past limit + shift)
extern "C" __global__ void al_below(float *out, int shift, int limit) {
  __shared__ float tile[N];
  int j = (int)blockIdx.x - shift;
  tile[threadIdx.x] = 0.f;
  __syncthreads();
  if (j < limit) tile[(threadIdx.x * 2) % N] = 1.f;
  __syncthreads();
  out[blockIdx.x * N + threadIdx.x] = tile[threadIdx.x];
}

// refused: the guard reads global memory (each block's own flag)
extern "C" __global__ void al_loaded(float *out, const int *flags) {
  __shared__ float tile[N];
  tile[threadIdx.x] = 0.f;
  __syncthreads();
  if (flags[blockIdx.x] > 0) tile[(threadIdx.x * 8) % N] = 1.f;
  __syncthreads();
  out[blockIdx.x * N + threadIdx.x] = tile[threadIdx.x];
}

// refused: the guard reads two axes at once (blocks with x + y < limit: a diagonal, no box
// of blocks), so every block runs
extern "C" __global__ void al_diag(float *out, int limit) {
  __shared__ float tile[N];
  tile[threadIdx.x] = 0.f;
  __syncthreads();
  if ((int)(blockIdx.x + blockIdx.y) < limit) tile[(threadIdx.x * 2) % N] = 1.f;
  __syncthreads();
  out[(blockIdx.y * gridDim.x + blockIdx.x) * N + threadIdx.x] = tile[threadIdx.x];
}

// an unsigned bounds check, i = blockIdx.x * N + threadIdx.x < n: the blocks before the
// one that n cuts are alike, that block and those after it run
extern "C" __global__ void al_unsigned(float *out, unsigned n) {
  __shared__ float tile[N];
  unsigned i = blockIdx.x * N + threadIdx.x;
  tile[threadIdx.x] = 0.f;
  __syncthreads();
  if (i < n) tile[(threadIdx.x * 2) % N] = 1.f;
  __syncthreads();
  out[i] = tile[threadIdx.x];
}
