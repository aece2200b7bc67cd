#!/usr/bin/env bash
# Rebuild the cubin kept here from hostile.cu (needs nvcc; the tests use the kept cubin).
# Usage: bash tests/data/hostile/build.sh
set -euo pipefail
cd "$(dirname "$0")"
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o hostile.sm_90.cubin hostile.cu
