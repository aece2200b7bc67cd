// A tile loop whose flag ptxas keeps in the low half of a register that held global data,
// as in CUTLASS 3.x's persistent GEMMs (the project's own kernel: tests/data/trace/lowbool).
// The flag is a 16-bit value (inline PTX `mov.b16`, as a bool member of a struct is), so
// ptxas writes its 0 with `PRMT Rf, RZ, 0x7610, Rf`, keeping the upper half, and tests its
// low byte with `LOP3.LUT P0, RZ, Rf, 0xff, RZ, 0xc0, !PT`. Before the loop Rf held one of
// the 16 words each block reads of `data`.

#define SET(v, x) asm volatile("mov.b16 %0, " #x ";" : "=h"(v))

extern "C" __global__ void low_bool(const int* data, int* out, int tiles) {
  __shared__ int s[256];
  int acc = 0;
#pragma unroll
  for (int i = 0; i < 16; ++i) acc += data[blockIdx.x * 16 + i] * (i + 1);
  int tile = 0;
  unsigned short more;
  if (tile < tiles) SET(more, 1); else SET(more, 0);
  for (;;) {
    int go;
    asm volatile(
        "{ .reg .b16 t; .reg .pred p; and.b16 t, %1, 255; setp.ne.s16 p, t, 0; "
        "selp.s32 %0, 1, 0, p; }"
        : "=r"(go)
        : "h"(more));
    if (!go) break;
    s[threadIdx.x] = data[tile * 256 + threadIdx.x];
    __syncthreads();
    acc += s[(threadIdx.x * 33) & 255];
    __syncthreads();
    tile += 1;
    if (tile < tiles) {
      SET(more, 1);
      if (threadIdx.x == 0) out[blockIdx.x * 256 + tile] = acc;
    } else {
      SET(more, 0);
    }
  }
  out[blockIdx.x * 256 + threadIdx.x] = acc;
}
