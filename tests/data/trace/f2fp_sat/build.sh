#!/bin/sh
# Rebuild the cubins from kernels/ (CUDA 13.0): sm_90a (the lab runs it) and sm_80 (traced).
set -e
cd "$(dirname "$0")"
for a in 90a 80; do
  nvcc -cubin -lineinfo -O3 -gencode=arch=compute_$a,code=sm_$a -o f2fp_sat.sm_$a.cubin kernels/f2fp_sat.cu
done
