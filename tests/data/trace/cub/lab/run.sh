#!/bin/sh
# On a GPU machine, from the repository root: OUT=DIR sh tests/data/trace/cub/lab/run.sh
# Builds the host program and the kernels' cubin (build.txt says whether it is the kept
# one), runs the launches once plainly, then counts them twice with Nsight Compute's per-op
# counters (ncu1.csv, ncu2.csv). Then, here:
#   python3 tests/data/trace/cub/lab/parse.py DIR > tests/data/trace/cub/measured.json
set -x
L=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
cd "$L" || exit 1
nvcc -O3 -lineinfo -arch=sm_90 -o "$OUT/lab" main.cu || exit 1
nvcc -cubin -O3 -lineinfo -arch=sm_90 -o "$OUT/kernels.cubin" ../kernels.cu || exit 1
cmp -s "$OUT/kernels.cubin" ../kernels.sm_90.cubin && echo "same cubin" > "$OUT/build.txt" || echo "cubin differs" > "$OUT/build.txt"
nvidia-smi -L > "$OUT/gpu.txt"; ncu --version | tail -1 >> "$OUT/gpu.txt"
"$OUT/lab" ../inputs > "$OUT/plain.txt" 2>&1
M=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__sass_inst_executed_op_shared_atom.sum
for r in 1 2; do
  ncu --clock-control none --csv --metrics $M "$OUT/lab" ../inputs > "$OUT/ncu$r.csv" 2> "$OUT/ncu$r.err"
done
ls -la "$OUT"
