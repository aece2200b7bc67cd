#!/bin/sh
# on a GPU machine (sm_90): OUT=DIR sh tests/data/trace/attnorder/lab/run.sh; then, here,
# python3 tests/data/trace/attnorder/lab/parse.py DIR > tests/data/trace/attnorder/measured.json
set -x
cd "$(dirname "$0")"
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o "$OUT/alab" main.cu && nvcc -cubin -O3 -gencode=arch=compute_90a,code=sm_90a -o "$OUT/a.cubin" ../kernels.cu
nvidia-smi -L > "$OUT/gpu.txt"
ncu --version > "$OUT/ncu_version.txt"
for r in 1 2; do
  ncu --clock-control none --csv \
    --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum,smsp__inst_executed.sum \
    "$OUT/alab" > "$OUT/ncu$r.csv" 2> "$OUT/ncu$r.err"
done
