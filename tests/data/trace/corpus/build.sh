#!/usr/bin/env bash
# Rebuild the cubins kept here from kernels/*.cu (needs nvcc). Usage: bash build.sh
set -euo pipefail
cd "$(dirname "$0")"
for src in kernels/*.cu; do
  name=$(basename "$src" .cu)
  nvcc -cubin -lineinfo -O3 -arch=sm_90 -o "$name.sm_90.cubin" "$src"
done
