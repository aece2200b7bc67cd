// Probe lab 2's dense dumps (issue 27): mufu_dense of ../probes2.sm_90.cubin over every region
// below, each region's results written as the differences of consecutive results (uint32,
// little-endian, mod 2^32; the first against 0), gzipped: OUTDIR/NAME.d32.gz, and a line
// "NAME fn first stride count" in OUTDIR/regions.txt. Element i of a region has the argument
// first + i * stride (mod 2^32), or for fn & 0x100 the hash of first + i that mufu_dense
// computes; its result is the prefix sum of the differences. Regions are written in order
// until OUTDIR holds more than LIMIT bytes.
// Build: nvcc -O2 -o dense dense.cu -lcuda; run: dense CUBIN OUTDIR LIMIT
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <sys/stat.h>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s; \
    cuGetErrorString(r_, &s); printf("CUDA error %s at line %d\n", s, __LINE__); exit(1);} \
  } while (0)

struct Region { const char *name; unsigned fn, first, stride, count; };

int main(int argc, char **argv) {
  if (argc < 4) { printf("usage: dense CUBIN OUTDIR LIMIT\n"); return 2; }
  std::string out = argv[2];
  long long limit = atoll(argv[3]), total = 0;
  std::vector<Region> regions = {
    // the seeds of double division and square root: every high word of [1, 2) ([1, 4) for
    // the root, both parities of the exponent), of the denormals (exponent 0), and every
    // 4096th high word of all (both signs, every exponent, 256 significands each)
    {"rcp64h_1_2", 1, 0x3ff00000u, 1, 1u << 20},
    {"rcp64h_denormal", 1, 0x00000000u, 1, 1u << 20},
    {"rcp64h_sweep", 1, 0x00000000u, 4096, 1u << 20},
    {"rsq64h_1_4", 2, 0x3ff00000u, 1, 1u << 21},
    {"rsq64h_denormal", 2, 0x00000000u, 1, 1u << 20},
    {"rsq64h_sweep", 2, 0x00000000u, 4096, 1u << 20},
    // every half and bf16, in both halves of the word
    {"tanh_f16x2_all", 3, 0x00000000u, 0x10001u, 1u << 16},
    {"tanh_bf16x2_all", 4, 0x00000000u, 0x10001u, 1u << 16},
    // tanh.approx.f32: 2^20 random patterns, every 256th float of both signs
    {"tanh_random", 0x100, 0x00000000u, 1, 1u << 20},
    {"tanh_sweep", 0, 0x00000000u, 256, 1u << 24},
    // then every float of one binade after another, outward from [1, 2), [-2, -1) among them
    {"tanh_e127", 0, 0x3f800000u, 1, 1u << 23},
    {"tanh_e126", 0, 0x3f000000u, 1, 1u << 23},
    {"tanh_e128", 0, 0x40000000u, 1, 1u << 23},
    {"tanh_e125", 0, 0x3e800000u, 1, 1u << 23},
    {"tanh_neg_e127", 0, 0xbf800000u, 1, 1u << 23},
    {"tanh_e129", 0, 0x40800000u, 1, 1u << 23},
    {"tanh_e124", 0, 0x3e000000u, 1, 1u << 23},
    {"tanh_e130", 0, 0x41000000u, 1, 1u << 23},
    {"tanh_e123", 0, 0x3d800000u, 1, 1u << 23},
    {"tanh_e122", 0, 0x3d000000u, 1, 1u << 23},
    {"tanh_e121", 0, 0x3c800000u, 1, 1u << 23},
    {"tanh_e120", 0, 0x3c000000u, 1, 1u << 23},
    {"tanh_e131", 0, 0x41800000u, 1, 1u << 23},
    {"tanh_e119", 0, 0x3b800000u, 1, 1u << 23},
    {"tanh_e118", 0, 0x3b000000u, 1, 1u << 23},
    {"tanh_e117", 0, 0x3a800000u, 1, 1u << 23},
    {"tanh_e116", 0, 0x3a000000u, 1, 1u << 23},
    {"tanh_e115", 0, 0x39800000u, 1, 1u << 23},
    {"tanh_e114", 0, 0x39000000u, 1, 1u << 23},
    {"tanh_e113", 0, 0x38800000u, 1, 1u << 23},
    {"tanh_e112", 0, 0x38000000u, 1, 1u << 23},
    {"tanh_e111", 0, 0x37800000u, 1, 1u << 23},
    {"tanh_e110", 0, 0x37000000u, 1, 1u << 23},
    {"tanh_e109", 0, 0x36800000u, 1, 1u << 23},
    {"tanh_e108", 0, 0x36000000u, 1, 1u << 23},
    {"tanh_e107", 0, 0x35800000u, 1, 1u << 23},
  };
  CK(cuInit(0)); CUdevice dev; CK(cuDeviceGet(&dev, 0));
  CUcontext ctx; CK(cuCtxCreate(&ctx, NULL, 0, dev));
  CUmodule m; CK(cuModuleLoad(&m, argv[1]));
  CUfunction f; CK(cuModuleGetFunction(&f, m, "mufu_dense"));
  const unsigned most = 1u << 24;
  CUdeviceptr d; CK(cuMemAlloc(&d, (size_t)most * 4));
  std::vector<unsigned> h(most);
  FILE *list = fopen((out + "/regions.txt").c_str(), "w");
  for (const Region &r : regions) {
    if (total > limit) { printf("stopped before %s: %lld bytes\n", r.name, total); break; }
    unsigned fn = r.fn, first = r.first, stride = r.stride;
    void *args[] = {&d, &fn, &first, &stride};
    CK(cuLaunchKernel(f, r.count / 256, 1, 1, 256, 1, 1, 0, 0, args, 0));
    CK(cuCtxSynchronize());
    CK(cuMemcpyDtoH(h.data(), d, (size_t)r.count * 4));
    for (unsigned i = r.count - 1; i > 0; --i) h[i] -= h[i - 1];
    std::string path = out + "/" + r.name + ".d32.gz";
    FILE *p = popen(("gzip -1 > '" + path + "'").c_str(), "w");
    if (!p || fwrite(h.data(), 4, r.count, p) != r.count) { printf("write %s\n", r.name); exit(1); }
    pclose(p);
    struct stat st;
    if (stat(path.c_str(), &st) == 0) total += st.st_size;
    fprintf(list, "%s %u %u %u %u\n", r.name, r.fn, r.first, r.stride, r.count);
    fflush(list);
    printf("%s: %lld bytes so far\n", r.name, total);
  }
  fclose(list);
  return 0;
}
