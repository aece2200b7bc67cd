#!/bin/sh
# on a GPU machine: OUT=DIR sh tests/data/trace/tidreads/lab/run.sh; then, here,
# python3 tests/data/trace/tidreads/lab/parse.py DIR > tests/data/trace/tidreads/measured.json
set -x
cd "$(dirname "$0")"
nvcc -O3 -arch=sm_90 -o "$OUT/tlab" main.cu && nvcc -cubin -O3 -arch=sm_90 -o "$OUT/t.cubin" ../kernels.cu
nvidia-smi -L > "$OUT/gpu.txt"
ncu --version > "$OUT/ncu_version.txt"
for r in 1 2; do
  ncu --clock-control none --csv \
    --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum,smsp__inst_executed.sum \
    "$OUT/tlab" > "$OUT/ncu$r.csv" 2> "$OUT/ncu$r.err"
done
