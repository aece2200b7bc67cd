#!/bin/sh
# the cubin the tests trace (CUDA 13.0 V13.0.88)
cd "$(dirname "$0")" && nvcc -cubin -lineinfo -O3 -arch=sm_90a -o bigwait.sm_90a.cubin kernels.cu
