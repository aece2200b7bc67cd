#!/bin/sh
# Rebuilds reqntid.sm_90.cubin from reqntid.ptx (ptxas of CUDA 13.0).
set -e
cd "$(dirname "$0")"
ptxas -arch=sm_90 -o reqntid.sm_90.cubin reqntid.ptx
