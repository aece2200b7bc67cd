#!/usr/bin/env bash
# Rebuild the cubins kept here (needs nvcc): warp_sgemm once per PAD, row_quads once.
# Usage: bash tests/data/trace/fixes/build.sh
set -euo pipefail
cd "$(dirname "$0")"
for pad in 0 1 2 4 8; do
  nvcc -cubin -lineinfo -O3 -arch=sm_90 -DPAD=$pad -o warp_sgemm.pad$pad.sm_90.cubin kernels/warp_sgemm.cu
done
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o row_quads.sm_90.cubin kernels/row_quads.cu
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o warp_sgemm_xor.sm_90.cubin kernels/warp_sgemm_xor.cu
nvcc -cubin -lineinfo -O3 -arch=sm_90 -DXOR_EACH -o warp_sgemm_xor_each.sm_90.cubin kernels/warp_sgemm_xor.cu
