#!/bin/sh
# on a GPU machine (sm_90): OUT=DIR sh tests/data/trace/attnmid/lab/run.sh; then, here,
# python3 tests/data/trace/attnorder/lab/parse.py DIR > tests/data/trace/attnmid/measured.json
# (attnorder's parse.py: the same two CSV files)
set -x
cd "$(dirname "$0")"
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o "$OUT/mlab" main.cu && nvcc -cubin -O3 -gencode=arch=compute_90a,code=sm_90a -o "$OUT/m.cubin" ../kernels.cu
cmp -s "$OUT/m.cubin" ../attnmid.sm_90a.cubin && echo "same cubin" > "$OUT/build.txt" || echo "cubin differs here" > "$OUT/build.txt"
nvidia-smi -L > "$OUT/gpu.txt"
ncu --version > "$OUT/ncu_version.txt"
for r in 1 2; do
  ncu --clock-control none --csv \
    --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum,smsp__inst_executed.sum \
    "$OUT/mlab" > "$OUT/ncu$r.csv" 2> "$OUT/ncu$r.err"
done
