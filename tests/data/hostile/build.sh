#!/usr/bin/env bash
# Rebuild the cubins kept here from hostile.cu ... hostile5.cu (needs nvcc; the
# tests use the kept cubins).
# Usage: bash tests/data/hostile/build.sh
set -euo pipefail
cd "$(dirname "$0")"
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o hostile.sm_90.cubin hostile.cu
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o hostile2.sm_90.cubin hostile2.cu
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o hostile3.sm_90.cubin hostile3.cu
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o hostile4.sm_90.cubin hostile4.cu
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o hostile5.sm_90.cubin hostile5.cu
