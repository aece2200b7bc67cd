// The driver-API labs' first steps (one_block_main.cu: f2fp_relu, f2fp_sat; mbarrier_forms): device 0's primary context
// made current and a kernel of a cubin loaded. Returns the first failing call's result.
#pragma once
#include <cuda.h>

static CUresult lab_kernel(const char *cubin, const char *name, CUfunction *fn) {
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUresult r = cuInit(0);
  if (r == CUDA_SUCCESS) r = cuDeviceGet(&dev, 0);
  if (r == CUDA_SUCCESS) r = cuDevicePrimaryCtxRetain(&ctx, dev);
  if (r == CUDA_SUCCESS) r = cuCtxSetCurrent(ctx);
  if (r == CUDA_SUCCESS) r = cuModuleLoad(&mod, cubin);
  if (r == CUDA_SUCCESS) r = cuModuleGetFunction(fn, mod, name);
  return r;
}
