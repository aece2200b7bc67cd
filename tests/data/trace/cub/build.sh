#!/bin/sh
# Rebuilds kernels.sm_90.cubin (CUDA 13.0's nvcc and its CUB).
set -e
cd "$(dirname "$0")"
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o kernels.sm_90.cubin kernels.cu
