#!/bin/sh
# the cubin the tests trace (CUDA 13.0): the same flags the lab's program is built with
cd "$(dirname "$0")" && nvcc -cubin -O3 -gencode=arch=compute_90a,code=sm_90a -o attnmid.sm_90a.cubin kernels.cu
