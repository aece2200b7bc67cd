// Issue 29: kernels whose shared-memory accesses go through device functions, built twice:
// with -G (a debug build: every device function a function of its own, called with
// CALL.ABS and left with RET.ABS, pointers to shared memory and to the stack passed as
// generic addresses, convergence barriers saved with BMOV) and with -O3 (the functions
// inlined, but for the __noinline__ ones). Each launch's shared requests and wavefronts are
// the same in both builds, and its buffers the same as NumPy's. The project's own code.
// Build: nvcc -cubin -G -arch=sm_90 -o ../debug_builds.g.sm_90.cubin debug_builds.cu
//        nvcc -cubin -lineinfo -O3 -arch=sm_90 -o ../debug_builds.o3.sm_90.cubin debug_builds.cu
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#define TILE 32

// a transpose through a padded tile (no bank conflict): the tile's accesses in functions
__device__ float load_elem(const float *in, int r, int c, int n) { return in[r * n + c]; }
__device__ void put(float (*tile)[TILE + 1], int r, int c, float v) { tile[r][c] = v; }
__device__ float get(float (*tile)[TILE + 1], int r, int c) { return tile[r][c]; }
extern "C" __global__ void transpose(float *out, const float *in, int n) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8) put(tile, threadIdx.y + j, threadIdx.x, load_elem(in, y + j, x, n));
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += 8) out[(y + j) * n + x] = get(tile, threadIdx.x, threadIdx.y + j);
}

// a tree reduction: each step a call, its guard inside the function
__device__ unsigned combine(unsigned a, unsigned b) { return a + b; }
__device__ void step(unsigned *s, int t, int k) {
  if (t < k) s[t] = combine(s[t], s[t + k]);
}
extern "C" __global__ void reduce(unsigned *out, const unsigned *in) {
  __shared__ unsigned s[256];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t];
  __syncthreads();
  for (int k = 128; k > 0; k >>= 1) {
    step(s, t, k);
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// a function whose two sides of a divergent branch call one function that reads shared
// memory: each side is a request of its own, in the debug build too
__device__ __noinline__ unsigned peek(const unsigned *s, int i) { return s[i]; }
__device__ __noinline__ unsigned pick(const unsigned *s, int t) {
  unsigned r;
  if (t & 1)
    r = peek(s, t * 2);
  else
    r = peek(s, t * 33 % 1024);
  return r;
}
extern "C" __global__ void nested(unsigned *out, const unsigned *in) {
  __shared__ unsigned s[1024];
  int t = threadIdx.x;
  for (int i = t; i < 1024; i += blockDim.x) s[i] = in[i];
  __syncthreads();
  out[t] = pick(s, t);
}

// an array on the stack filled through a pointer, its values the shared addresses
__device__ void fill(unsigned *v, int n, unsigned seed) {
  for (int i = 0; i < n; i++) v[i] = (seed * (2 * i + 1)) % 256;
}
extern "C" __global__ void stack_array(unsigned *out, const unsigned *in) {
  __shared__ unsigned s[256];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  unsigned v[4];
  fill(v, 4, in[t] % 97 + t);
  unsigned r = 0;
  for (int i = 0; i < 4; i++) r += s[v[i]] << i;
  out[t] = r;
}

// a function pointer, each thread's own: -G calls through the address (CALL.ABS.NOINC R),
// -O3 through the offset from the kernel's start (CALL.REL.NOINC R `(fptr))
__device__ __noinline__ unsigned twice(const unsigned *s, int i) { return 2 * s[i]; }
__device__ __noinline__ unsigned thrice(const unsigned *s, int i) { return 3 * s[(i * 2) % 64]; }
typedef unsigned (*pick_fn)(const unsigned *, int);
extern "C" __global__ void fptr(unsigned *out, const unsigned *in) {
  __shared__ unsigned s[64];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  pick_fn f = (in[t] & 1) ? twice : thrice;
  out[t] = f(s, t);
}

// a virtual call, each thread's own object: -G calls through the virtual table (in the
// module's .nv.global.init, its entries the functions' addresses the loader writes); -O3
// calls neither (it sees which object each thread has)
struct Shape {
  __device__ virtual unsigned at(const unsigned *s, int i) const = 0;
};
struct Row : Shape {
  __device__ unsigned at(const unsigned *s, int i) const override { return s[i]; }
};
struct Col : Shape {
  __device__ unsigned at(const unsigned *s, int i) const override {
    return s[(i * 32) % 1024 + i / 32];
  }
};
extern "C" __global__ void virtual_call(unsigned *out, const unsigned *in) {
  __shared__ unsigned s[1024];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) s[i] = in[i];
  __syncthreads();
  Row row;
  Col col;
  const Shape *shape = (in[threadIdx.x] & 1) ? (const Shape *)&row : (const Shape *)&col;
  out[threadIdx.x] = shape->at(s, threadIdx.x);
}

// a recursion: the function saves the convergence barrier it reuses across each call (BMOV)
__device__ int walk(const int *tile, int i, int n) {
  if (n <= 0) return tile[i & 31];
  int v = tile[i & 31];
  if (v & 1) v += walk(tile, i + v, n - 1);
  return v;
}
extern "C" __global__ void recursive_walk(int *out, const int *in) {
  __shared__ int tile[32];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = walk(tile, threadIdx.x, in[32]);
}

// CUB's block reduce and scan: in the -G build their functions take the address of objects
// in the module's .nv.global (tag types), which the trace places in global memory
extern "C" __global__ void cub_block(int *out, const int *in) {
  typedef cub::BlockReduce<int, 128> Reduce;
  typedef cub::BlockScan<int, 128> Scan;
  __shared__ typename Reduce::TempStorage reduce_storage;
  __shared__ typename Scan::TempStorage scan_storage;
  int v = in[threadIdx.x];
  int sum = Reduce(reduce_storage).Sum(v);
  int before;
  Scan(scan_storage).ExclusiveSum(v, before);
  out[threadIdx.x] = before + (threadIdx.x == 0 ? sum : 0);
}

// atomics on shared memory through a function, one pattern a launch (mode): -G a generic ATOM.E
// on the shared window (the 64-bit add: ATOM.E.ADD.64, then the ATOMS.CAST.SPIN.64 loop where
// the address is shared), -O3 ATOMS; 64 threads. mode 0: lane t adds to word t, 1: to word
// 2t % 64 (two lanes a word), 2: every lane to word 0, 3: a 64-bit add to word t, 4: a
// compare-and-swap of word t (the even lanes' words swap, the odd ones' do not)
__device__ void add_at(unsigned *s, int i, unsigned v) { atomicAdd(&s[i], v); }
__device__ void add_wide(unsigned long long *d, int t, unsigned v) { atomicAdd(&d[t], v); }
__device__ unsigned swap(unsigned *s, int t, unsigned v) { return atomicCAS(&s[t], 0u, v); }
extern "C" __global__ void atomics(unsigned *out, const unsigned *in, int mode) {
  __shared__ unsigned s[64];
  __shared__ unsigned long long wide[64];
  int t = threadIdx.x;
  s[t] = mode == 4 ? t & 1 : in[t];
  wide[t] = in[t + 64];
  __syncthreads();
  unsigned old = 0;
  if (mode == 0) add_at(s, t, in[t + 128]);
  if (mode == 1) add_at(s, t * 2 % 64, in[t + 128]);
  if (mode == 2) add_at(s, 0, in[t + 128] & 0xffff);
  if (mode == 3) add_wide(wide, t, in[t + 128]);
  if (mode == 4) old = swap(s, t, in[t + 128]);
  __syncthreads();
  out[t] = s[t] + old;
  out[64 + t] = (unsigned)wide[t];
  out[128 + t] = (unsigned)(wide[t] >> 32);
}
