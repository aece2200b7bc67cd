#!/bin/bash
# ws_tile (grid 1, K=256) from its cubin under Nsight Compute, twice: per-op shared counters
# and the SourceCounters of each SASS instruction.
# Launched by ../../trans_versions/lab/run_cubin.cu (driver API): a, b, c 1 MiB zeroed, K, the
# global scratch its device-side descriptors are written into (1 MiB), no profile scratch.
# From the repo root, on a GPU machine: bash tests/data/triton/sweep16/lab/run.sh OUTDIR
set -u; H=$(cd "$(dirname "$0")" && pwd); D=$(dirname "$H"); T=$(dirname "$D")/trans_versions/lab
O=$(realpath -m "${1:-out}"); mkdir -p "$O"; cd "$O"
nvidia-smi -L > gpu.txt; ncu --version | tail -1 >> gpu.txt
nvcc -O2 -o run_cubin "$T/run_cubin.cu" -lcuda || exit 1
M=$(printf '%s,' smsp__sass_inst_executed_op_shared_{ld,st}.sum smsp__inst_executed_op_ldsm.sum \
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,gmma,misc}.sum \
  smsp__sass_inst_executed_op_tma.sum smsp__sass_inst_executed_op_shared_gmma.sum \
  smsp__sass_inst_executed_op_ldsm.sum l1tex__data_pipe_lsu_wavefronts_mem_shared.sum \
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum smsp__inst_executed_op_shared_{ld,st}.sum)
cubin=$(ls "$D"/cache/*/ws_tile.cubin)
for r in 1 2; do
  ncu --clock-control none --metrics "${M%,}" --section SourceCounters -f -o "rep_$r" \
    ./run_cubin "$cubin" ws_tile 1 384 65784 p p p i:256 p q > "ncu_ws_tile_$r.txt" 2>&1
  ncu -i "rep_$r.ncu-rep" --page raw --csv > "ncu_ws_tile_$r.csv" 2>&1
  ncu -i "rep_$r.ncu-rep" --page source --csv --print-source sass > "source_ws_tile_$r.csv" 2>&1
done
rm -f run_cubin rep_*.ncu-rep; echo "wrote $O"
