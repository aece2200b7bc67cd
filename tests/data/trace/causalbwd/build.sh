#!/bin/sh
# Rebuild the cubin from kernels/ (CUDA 13.0).
set -e
cd "$(dirname "$0")"
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o causal_bwd.sm_90.cubin kernels/causal_bwd.cu
