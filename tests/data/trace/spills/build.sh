#!/bin/sh
# Rebuilds spills.sm_90.cubin (CUDA 13.0).
set -e
cd "$(dirname "$0")"
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o spills.sm_90.cubin spills.cu
