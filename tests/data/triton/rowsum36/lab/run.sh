#!/bin/bash
# Triton 3.6 (PyTorch's) JIT of kernels.py's launches, compiled once without the profiler, then
# every launch under Nsight Compute twice. Usage: lab/run.sh OUTDIR (from .lab/emptyreq/run.sh)
# (the steps: ../../../lab_common/tri_lab.sh)
set -u
H=$(cd "$(dirname "$0")" && pwd)
. "$H/../../../lab_common/tri_lab.sh"
tri_start "$1"
cd "$H"
tri_warm 1 40; tail -3 "$W/warm0.log"
for r in 1 2; do tri_run $r 30 'regex:^dot_rowsum$'; done
tri_clean
