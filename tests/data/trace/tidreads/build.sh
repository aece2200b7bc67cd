#!/bin/sh
# the cubin the tests trace (CUDA 13.0): the same flags the lab's program is built with
cd "$(dirname "$0")" && nvcc -cubin -O3 -arch=sm_90 -o tidreads.sm_90.cubin kernels.cu
