// The mbarrier_forms lab's host program: loads ../mbarrier_forms.sm_90a.cubin with the driver
// API, launches each form once (<<<1, 64>>>, 40 rounds) and prints what `out` holds as one
// JSON line per form: {"form": F, "rc": CUDA result, "out": [out[0], ..., out[32]]}.
#include <cuda.h>
#include "../../../lab_common/cu_kernel.h"
#include <cstdio>

#define CHECK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { std::printf("{\"error\": \"%s\", \"rc\": %d}\n", #x, int(r_)); return 1; } } while (0)

int main(int argc, char **argv) {
  const char *cubin = argc > 1 ? argv[1] : "mbarrier_forms.sm_90a.cubin";
  CUfunction fn;
  CHECK(lab_kernel(cubin, "_Z14mbarrier_formsPiiiii", &fn));
  CUdeviceptr out;
  CHECK(cuMemAlloc(&out, 33 * sizeof(int)));
  const int forms[3][3] = {{0, 16, 1}, {1, 0, 3}, {2, 0, 2}};  // form, tx, count
  for (auto &f : forms) {
    CHECK(cuMemsetD32(out, 0xffffffffu, 33));
    int form = f[0], rounds = 40, tx = f[1], count = f[2];
    void *args[] = {&out, &form, &rounds, &tx, &count};
    CUresult rc = cuLaunchKernel(fn, 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr);
    if (rc == CUDA_SUCCESS) rc = cuCtxSynchronize();
    int host[33] = {};
    if (rc == CUDA_SUCCESS) CHECK(cuMemcpyDtoH(host, out, sizeof(host)));
    std::printf("{\"form\": %d, \"rc\": %d, \"out\": [", form, int(rc));
    for (int i = 0; i < 33; ++i) std::printf("%s%d", i ? ", " : "", host[i]);
    std::printf("]}\n");
    if (rc != CUDA_SUCCESS) return 1;
  }
  return 0;
}
