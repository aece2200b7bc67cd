// shmem trace emulator tests for sm_80 and sm_90: a cp.async double-buffered copy with
// zero fill, then ldmatrix + mma.sync on the copied half tiles.
// Build: nvcc -cubin -lineinfo -O3 -arch=sm_XX -o ../emu_async_smXX.cubin emu_async.cu
#include <cuda_fp16.h>

__device__ __forceinline__ unsigned smem_u32(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// one warp; tiles of 16x16 halves; D[t] = A[t] (16x16) x A[t][:, 0:8] for each tile t;
// rows >= valid_rows of every tile are zero-filled by cp.async (src-size 0)
__global__ void emu_async_mma(const half *in, float *out, int tiles, int valid_rows) {
  __shared__ __align__(128) half buf[2][16 * 16];
  unsigned lane = threadIdx.x;
  auto load = [&](int t, int s) {
    for (int c = 0; c < 2; ++c) {  // 32 chunks of 16 bytes: row = chunk / 2, half = chunk % 2
      unsigned chunk = lane + 32 * c;
      if (chunk >= 32) break;
      unsigned row = chunk / 2, col = (chunk % 2) * 8;
      unsigned bytes = row < (unsigned)valid_rows ? 16 : 0;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                       smem_u32(&buf[s][row * 16 + col])),
                   "l"(in + t * 256 + row * 16 + col), "r"(bytes)
                   : "memory");
    }
    asm volatile("cp.async.commit_group;\n" ::: "memory");
  };
  load(0, 0);
  for (int t = 0; t < tiles; ++t) {
    if (t + 1 < tiles) {
      load(t + 1, (t + 1) % 2);
      asm volatile("cp.async.wait_group 1;\n" ::: "memory");
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::: "memory");
    }
    __syncwarp();
    const half *tile = buf[t % 2];
    unsigned a0, a1, a2, a3, b0, b1;
    unsigned r = lane % 16, chunk = lane / 16;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3)
                 : "r"(smem_u32(&tile[r * 16 + chunk * 8])));
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(b0), "=r"(b1)
                 : "r"(smem_u32(&tile[(lane % 16) * 16])));
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    float *o = out + t * 128 + lane * 4;
    o[0] = d0; o[1] = d1; o[2] = d2; o[3] = d3;
    __syncwarp();
  }
}
