#!/bin/bash
# the cubin the tests trace (CUDA 13.0): from this folder
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o fa2_style.sm_90.cubin kernels/fa2_style.cu
