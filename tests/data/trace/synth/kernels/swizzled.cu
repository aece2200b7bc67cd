// Issue 31 lab: shared tiles with bank conflicts, each laid out by a CuTe Swizzle<B,M,S> on
// byte offsets given at compile time (-DSWZ_B=.. -DSWZ_M=.. -DSWZ_S=..; none by default), so
// the map `shmem trace --suggest` synthesizes for the unswizzled build can be applied and
// measured. The project's own kernels; one block each.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_90 [-DSWZ_B=B -DSWZ_M=M -DSWZ_S=S] swizzled.cu
#include <cuda_fp16.h>
#include <cstdint>

#ifndef SWZ_B
#define SWZ_B 0
#define SWZ_M 0
#define SWZ_S 1
#endif

// CuTe Swizzle<SWZ_B,SWZ_M,SWZ_S> on a byte offset inside a tile
__device__ __forceinline__ unsigned swz(unsigned off) {
  return off ^ ((off >> SWZ_S) & (((1u << SWZ_B) - 1u) << SWZ_M));
}
template <typename T> __device__ __forceinline__ T &at(void *tile, unsigned element) {
  return *reinterpret_cast<T *>(static_cast<char *>(tile) + swz(element * sizeof(T)));
}

// float 32x32 transpose, block (32, 8): rows stored, columns loaded
extern "C" __global__ void transpose_f32(float *out, const float *in) {
  __shared__ __align__(1024) float tile[32 * 32];
  unsigned tx = threadIdx.x, ty = threadIdx.y;
  for (unsigned j = 0; j < 32; j += 8) at<float>(tile, (ty + j) * 32 + tx) = in[(ty + j) * 32 + tx];
  __syncthreads();
  for (unsigned j = 0; j < 32; j += 8) out[(ty + j) * 32 + tx] = at<float>(tile, tx * 32 + ty + j);
}

// double 32x32 transpose, block (32, 8)
extern "C" __global__ void transpose_f64(double *out, const double *in) {
  __shared__ __align__(1024) double tile[32 * 32];
  unsigned tx = threadIdx.x, ty = threadIdx.y;
  for (unsigned j = 0; j < 32; j += 8)
    at<double>(tile, (ty + j) * 32 + tx) = in[(ty + j) * 32 + tx];
  __syncthreads();
  for (unsigned j = 0; j < 32; j += 8)
    out[(ty + j) * 32 + tx] = at<double>(tile, tx * 32 + ty + j);
}

// half 64x64 tile, block (64, 4): filled by rows (one half a lane), read down its columns
extern "C" __global__ void half_columns(__half *out, const __half *in) {
  __shared__ __align__(1024) __half tile[64 * 64];
  unsigned tx = threadIdx.x, ty = threadIdx.y;
  for (unsigned r = ty; r < 64; r += 4) at<__half>(tile, r * 64 + tx) = in[r * 64 + tx];
  __syncthreads();
  __half acc = __float2half(0.f);
  for (unsigned c = ty; c < 64; c += 4) acc = __hadd(acc, at<__half>(tile, tx * 64 + c));
  out[ty * 64 + tx] = acc;
}

// uint4 64x8 tile (128-byte rows), block 64: each thread stores and loads its own row
extern "C" __global__ void uint4_rows(uint4 *out, const uint4 *in) {
  __shared__ __align__(1024) uint4 tile[64 * 8];
  unsigned t = threadIdx.x;
#pragma unroll
  for (unsigned k = 0; k < 8; ++k) at<uint4>(tile, t * 8 + k) = in[k * 64 + t];
  __syncthreads();
  uint4 acc = make_uint4(0, 0, 0, 0);
#pragma unroll
  for (unsigned k = 0; k < 8; ++k) {
    uint4 v = at<uint4>(tile, t * 8 + k);
    acc.x ^= v.x; acc.y += v.y; acc.z |= v.z; acc.w ^= v.w;
  }
  out[t] = acc;
}

// float2 32x32 tile (256-byte rows), block (32, 4): rows stored, columns loaded (8-byte lanes)
extern "C" __global__ void float2_columns(float2 *out, const float2 *in) {
  __shared__ __align__(1024) float2 tile[32 * 32];
  unsigned tx = threadIdx.x, ty = threadIdx.y;
  for (unsigned r = ty; r < 32; r += 4) at<float2>(tile, r * 32 + tx) = in[r * 32 + tx];
  __syncthreads();
  float2 acc = make_float2(0.f, 0.f);
  for (unsigned c = ty; c < 32; c += 4) {
    float2 v = at<float2>(tile, tx * 32 + c);
    acc.x += v.x; acc.y += v.y;
  }
  out[ty * 32 + tx] = acc;
}

// half 64x64 tile (128-byte rows), block 128: stored by 16-byte rows, read by ldmatrix.x4
// fragments of 16x16 (lane l gives the row address of row l%16, columns 8*(l/16)..)
extern "C" __global__ void ldmatrix_tile(unsigned *out, const uint4 *in) {
  __shared__ __align__(1024) __half tile[64 * 64];
  unsigned t = threadIdx.x, lane = t & 31, warp = t >> 5;
  for (unsigned c = t; c < 64 * 8; c += 128) at<uint4>(tile, c) = in[c];
  __syncthreads();
  unsigned acc = 0;
#pragma unroll
  for (unsigned kb = 0; kb < 4; ++kb) {
    unsigned row = warp * 16 + (lane & 15), col = kb * 16 + (lane >> 4) * 8;
    unsigned addr = (unsigned)__cvta_generic_to_shared(&at<__half>(tile, row * 64 + col));
    unsigned r0, r1, r2, r3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
    acc ^= r0 + r1 + r2 + r3;
  }
  out[t] = acc;
}
