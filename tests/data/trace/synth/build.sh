#!/usr/bin/env bash
# Rebuild the cubins kept here (needs nvcc, CUDA 13.0): swizzled.cu unswizzled and with each
# map `shmem trace --suggest` synthesized for one of its kernels (CuTe Swizzle<B,M,S> on byte
# offsets), tma_tile.cu with a plain and a 128B-swizzled TMA tile. Usage: bash build.sh
set -euo pipefail
cd "$(dirname "$0")"
cc="nvcc -cubin -lineinfo -O3"
$cc -arch=sm_90 -o swizzled.none.sm_90.cubin kernels/swizzled.cu
for bms in 5,2,5 4,3,5 3,4,3; do
  IFS=, read -r b m s <<< "$bms"
  $cc -arch=sm_90 -DSWZ_B=$b -DSWZ_M=$m -DSWZ_S=$s -o "swizzled.s$b$m$s.sm_90.cubin" kernels/swizzled.cu
done
$cc -gencode=arch=compute_90a,code=sm_90a -o tma_tile.none.sm_90a.cubin kernels/tma_tile.cu
$cc -gencode=arch=compute_90a,code=sm_90a -DTMA_SWZ=3 -o tma_tile.s343.sm_90a.cubin kernels/tma_tile.cu
