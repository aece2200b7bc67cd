// run_cubin CUBIN NAME GRIDX THREADS SMEM PARAM... ; PARAM: p (1 MiB zeroed buffer), i:N (u32), f:X (f32), b:N (u8), q (null u64)
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define CK(x) do { CUresult r = (x); if (r != CUDA_SUCCESS) { const char *s; cuGetErrorString(r, &s); fprintf(stderr, "%s: %s\n", #x, s); exit(1); } } while (0)
int main(int argc, char **argv) {
  CK(cuInit(0)); CUdevice d; CK(cuDeviceGet(&d, 0)); CUcontext c; CK(cuDevicePrimaryCtxRetain(&c, d)); CK(cuCtxSetCurrent(c));
  CUmodule m; CK(cuModuleLoad(&m, argv[1])); CUfunction f; CK(cuModuleGetFunction(&f, m, argv[2]));
  int gx = atoi(argv[3]), th = atoi(argv[4]), smem = atoi(argv[5]);
  void *args[16]; unsigned long long store[16];
  for (int i = 6; i < argc; i++) {
    int k = i - 6;
    if (argv[i][0] == 'p') { CUdeviceptr p; CK(cuMemAlloc(&p, 1 << 20)); CK(cuMemsetD8(p, 0, 1 << 20)); store[k] = p; }
    else if (argv[i][0] == 'q') store[k] = 0;
    else if (argv[i][0] == 'f') { float v = (float)atof(argv[i] + 2); store[k] = 0; memcpy(&store[k], &v, 4); }
    else if (argv[i][0] == 'b') { store[k] = 0; unsigned char v = (unsigned char)atoi(argv[i] + 2); memcpy(&store[k], &v, 1); }
    else { store[k] = 0; unsigned v = (unsigned)atoi(argv[i] + 2); memcpy(&store[k], &v, 4); }
    args[k] = &store[k];
  }
  CK(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
  CK(cuLaunchKernel(f, gx, 1, 1, th, 1, 1, smem, 0, args, 0)); CK(cuCtxSynchronize());
  printf("ok %s\n", argv[1]); return 0;
}
