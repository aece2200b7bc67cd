#!/bin/sh
# Rebuilds empty_wgmma.sm_90a.cubin (CUDA 13.0).
set -e
cd "$(dirname "$0")"
nvcc -cubin -lineinfo -O3 -arch=sm_90a -o empty_wgmma.sm_90a.cubin empty_wgmma.cu
