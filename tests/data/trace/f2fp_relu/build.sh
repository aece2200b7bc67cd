#!/bin/sh
# Rebuild the cubin from kernels/ (CUDA 13.0).
set -e
cd "$(dirname "$0")"
nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o f2fp_relu.sm_90a.cubin kernels/f2fp_relu.cu
