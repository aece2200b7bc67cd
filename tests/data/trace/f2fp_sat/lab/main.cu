// The f2fp_sat lab's host program: loads the cubin with the driver API, runs
// f2fp_sat<<<1, 64>>>(in, out) on IN.bin (128 floats) and writes out (64 x 20 words) to OUT.bin.
#include <cuda.h>
#include "../../../lab_common/cu_kernel.h"
#include <cstdio>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { std::printf("%s failed: %d\n", #x, int(r_)); return 1; } } while (0)

int main(int argc, char **argv) {
  if (argc != 4) { std::printf("usage: harness CUBIN IN.bin OUT.bin\n"); return 2; }
  float in[128];
  static unsigned out[64 * 20];
  FILE *f = std::fopen(argv[2], "rb");
  if (!f || std::fread(in, sizeof(in), 1, f) != 1) { std::printf("cannot read %s\n", argv[2]); return 1; }
  std::fclose(f);
  CUfunction fn;
  CHECK(lab_kernel(argv[1], "_Z8f2fp_satPKfPj", &fn));
  CUdeviceptr din, dout;
  CHECK(cuMemAlloc(&din, sizeof(in)));
  CHECK(cuMemAlloc(&dout, sizeof(out)));
  CHECK(cuMemcpyHtoD(din, in, sizeof(in)));
  CHECK(cuMemsetD8(dout, 0xA5, sizeof(out)));  // a word the kernel did not write shows
  void *args[] = {&din, &dout};
  CHECK(cuLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(out, dout, sizeof(out)));
  f = std::fopen(argv[3], "wb");
  if (!f || std::fwrite(out, sizeof(out), 1, f) != 1) { std::printf("cannot write %s\n", argv[3]); return 1; }
  std::fclose(f);
  std::printf("wrote %s\n", argv[3]);
  return 0;
}
