#!/bin/sh
# Rebuild the cubins from calls.cu (CUDA 13.0).
set -e
cd "$(dirname "$0")"
for a in 80 90; do
  nvcc -cubin -lineinfo -O3 -arch=sm_$a -o calls.sm_$a.cubin calls.cu
done
