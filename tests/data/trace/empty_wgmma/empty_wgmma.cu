// The empty wgmma ptxas writes (tests/test_trace_empty_wgmma.py): a loop of n m64n8k16
// wgmmas (n a runtime argument, so the group may hold none) committed and waited after it.
// CUDA 13.0's ptxas (sm_90a) puts `HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0` after the
// loop, before the commit: a wgmma that writes no register and reads no descriptor.
#include <cstdint>

__device__ uint64_t descriptor(const void *tile) {
    // no swizzle, K-major: start address, LBO 128 B, SBO 256 B (each in 16-byte units)
    auto start = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
    return ((start & 0x3FFFF) >> 4) | (uint64_t(8) << 16) | (uint64_t(16) << 32);
}

__global__ void empty_wgmma(float *out, int n) {
    __shared__ __align__(128) uint16_t a[64 * 16], b[8 * 16];
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) a[i] = 0;
    for (int i = threadIdx.x; i < 8 * 16; i += blockDim.x) b[i] = 0;
    __syncthreads();
    uint64_t da = descriptor(a), db = descriptor(b);
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    asm volatile("wgmma.fence.sync.aligned;\n");
#pragma unroll 1
    for (int k = 0; k < n; ++k) {
        asm volatile(
            "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 "
            "{%0,%1,%2,%3}, %4, %5, 1, 1, 1, 0, 0;\n"
            : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
            : "l"(da), "l"(db));
        d0 += n;
    }
    asm volatile("wgmma.commit_group.sync.aligned;\n");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    out[threadIdx.x] = d0 + d1 + d2 + d3;
}
