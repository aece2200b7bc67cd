// fp8 pairs unpacked to half pairs (cvt.rn.f16x2.e5m2x2 / .e4m3x2: F2FP.F16.E5M2.UNPACK_B and
// F2FP.F16.E4M3.UNPACK_B on sm_90), from both halves of each thread's word.
#include <cstdint>

__device__ uint32_t unpack_e5m2(uint16_t x) {
    uint32_t r;
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(r) : "h"(x));
    return r;
}

__device__ uint32_t unpack_e4m3(uint16_t x) {
    uint32_t r;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r) : "h"(x));
    return r;
}

__global__ void emu_fp8(const uint32_t* in, uint32_t* out) {
    int t = threadIdx.x;
    uint32_t w = in[t];
    out[4 * t + 0] = unpack_e5m2(uint16_t(w));
    out[4 * t + 1] = unpack_e5m2(uint16_t(w >> 16));
    out[4 * t + 2] = unpack_e4m3(uint16_t(w));
    out[4 * t + 3] = unpack_e4m3(uint16_t(w >> 16));
}
