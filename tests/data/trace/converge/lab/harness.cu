// Launches the kernels of converge.sm_90a.cubin (the binary traced) through the driver API,
// one block of 64 threads each, as launches.txt lists them; writes each launch's output
// buffer (out.NAME.bin) and what warp 0's lanes saw at each probe (__activemask()).
// Usage: harness CUBIN LAUNCHES OUTDIR [NAME ...]   (no NAME: every launch)
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CK(x)                                                              \
  do {                                                                     \
    CUresult r_ = (x);                                                     \
    if (r_ != CUDA_SUCCESS) {                                              \
      const char* s_ = nullptr;                                            \
      cuGetErrorString(r_, &s_);                                           \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, s_ ? s_ : "?"); \
      exit(1);                                                             \
    }                                                                      \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s CUBIN LAUNCHES OUTDIR [NAME ...]\n", argv[0]);
    return 2;
  }
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmodule mod;
  CK(cuModuleLoad(&mod, argv[1]));
  const size_t OUT_WORDS = 16384;
  unsigned host_in[256];
  host_in[0] = 4;  // stages
  host_in[1] = 4;  // passes
  for (int i = 2; i < 256; ++i) host_in[i] = (i * 7 + 3) % 16;
  CUdeviceptr d_out, d_in;
  CK(cuMemAlloc(&d_out, OUT_WORDS * 4));
  CK(cuMemAlloc(&d_in, sizeof host_in));
  CK(cuMemcpyHtoD(d_in, host_in, sizeof host_in));
  std::ifstream f(argv[2]);
  std::string line;
  std::vector<unsigned> out(OUT_WORDS);
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string name, kernel;
    int n = 0;
    ls >> name >> kernel >> n;
    bool wanted = argc == 4;
    for (int a = 4; a < argc; ++a) wanted |= name == argv[a];
    if (!wanted) continue;
    CUfunction fn;
    CK(cuModuleGetFunction(&fn, mod, kernel.c_str()));
    CK(cuMemsetD32(d_out, 0, OUT_WORDS));
    void* args[] = {&d_out, &d_in, &n};
    CK(cuLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, 0, args, nullptr));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(out.data(), d_out, OUT_WORDS * 4));
    std::string path = std::string(argv[3]) + "/out." + name + ".bin";
    FILE* o = fopen(path.c_str(), "wb");
    if (o) {
      fwrite(out.data(), 4, OUT_WORDS, o);
      fclose(o);
    }
    printf("%s %s n=%d", name.c_str(), kernel.c_str(), n);
    for (int slot = 0; slot < 8; ++slot) {  // the distinct masks lanes saw at each probe
      std::vector<unsigned> seen;
      for (int lane = 0; lane < 32; ++lane) {
        unsigned m = out[(slot * 32 + lane) * 2];
        if (m && std::find(seen.begin(), seen.end(), m) == seen.end()) seen.push_back(m);
      }
      if (seen.empty()) continue;
      printf("  probe%d:", slot);
      for (unsigned m : seen) printf(" %08x", m);
    }
    printf("\n");
    fflush(stdout);
  }
  return 0;
}
