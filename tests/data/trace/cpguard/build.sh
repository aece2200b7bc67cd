#!/bin/sh
# Rebuilds cpguard.sm_90.cubin (CUDA 13.0).
set -e
cd "$(dirname "$0")"
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o cpguard.sm_90.cubin cpguard.cu
