// A lab's host program for a kernel (const T *in, U *out) run as one block: loads CUBIN with
// the driver API, copies IN.bin (IN_BYTES) in, fills out (OUT_BYTES) with 0xA5 so that a word
// the kernel did not write shows, runs SYMBOL<<<1, THREADS>>>(in, out) and writes out to OUT.bin.
// Shared by the labs that compare a kernel's output byte for byte (tests/data/trace/f2fp_relu,
// f2fp_sat): nvcc -O2 -o harness one_block_main.cu -lcuda
#include <cuda.h>
#include "cu_kernel.h"
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { std::printf("%s failed: %d\n", #x, int(r_)); return 1; } } while (0)

int main(int argc, char **argv) {
  if (argc != 8) {
    std::printf("usage: harness CUBIN SYMBOL THREADS IN.bin IN_BYTES OUT.bin OUT_BYTES\n");
    return 2;
  }
  const unsigned threads = unsigned(std::atoi(argv[3]));
  std::vector<unsigned char> in(size_t(std::atol(argv[5]))), out(size_t(std::atol(argv[7])));
  FILE *f = std::fopen(argv[4], "rb");
  if (!f || std::fread(in.data(), in.size(), 1, f) != 1) { std::printf("cannot read %s\n", argv[4]); return 1; }
  std::fclose(f);
  CUfunction fn;
  CHECK(lab_kernel(argv[1], argv[2], &fn));
  CUdeviceptr din, dout;
  CHECK(cuMemAlloc(&din, in.size()));
  CHECK(cuMemAlloc(&dout, out.size()));
  CHECK(cuMemcpyHtoD(din, in.data(), in.size()));
  CHECK(cuMemsetD8(dout, 0xA5, out.size()));
  void *args[] = {&din, &dout};
  CHECK(cuLaunchKernel(fn, 1, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr));
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(out.data(), dout, out.size()));
  f = std::fopen(argv[6], "wb");
  if (!f || std::fwrite(out.data(), out.size(), 1, f) != 1) { std::printf("cannot write %s\n", argv[6]); return 1; }
  std::fclose(f);
  std::printf("wrote %s\n", argv[6]);
  return 0;
}
