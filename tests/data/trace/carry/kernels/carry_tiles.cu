// A block's linear tile index made in 64 bits from the block index (a division by 3 through
// a 64-bit multiply-high, then a 64-bit add: IMAD.WIDE.U32 with a carry out, IADD3 with two
// carry outs and IADD3.X that reads them), compared against a 64-bit count, as CUTLASS 3.x's
// persistent tile scheduler does with its uint64 work index: the blocks whose index reaches
// the count return, the others store a row of 256 floats to shared memory and read it back.
//
// nvcc -cubin -lineinfo -O3 -arch=sm_90 (build.sh)
__global__ void carry_tiles(float *out, unsigned long long base, unsigned long long count) {
  __shared__ float tile[256];
  unsigned long long idx = base + (unsigned long long)blockIdx.x * 0x100000000ull / 3 + blockIdx.x;
  if (idx >= count) return;
  tile[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  out[blockIdx.x * 256 + threadIdx.x] = tile[(threadIdx.x * 33) % 256];
}

// The block index through float: CUTLASS 3.x's tile scheduler divides it by the cluster's
// size as (float)blockIdx * (1 / size), truncated (I2FP, FMUL, F2I); the blocks whose quotient
// reaches `limit` return.
__global__ void float_scaled(float *out, float inv, unsigned limit) {
  __shared__ float tile[256];
  unsigned group = __float2uint_rz((float)blockIdx.x * inv);
  if (group >= limit) return;
  tile[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  out[blockIdx.x * 256 + threadIdx.x] = tile[(threadIdx.x * 33) % 256];
}
