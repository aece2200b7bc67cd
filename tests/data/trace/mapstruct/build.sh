#!/bin/sh
# Rebuild the cubin from kernels/ (CUDA 13.0, sm_90a: TMA).
set -e
cd "$(dirname "$0")"
nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o atom_copy.sm_90a.cubin kernels/atom_copy.cu
