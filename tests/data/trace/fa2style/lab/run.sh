#!/bin/bash
# fa2_style's lab: the kernel launched by lab/main.cu (causal and not), each under Nsight
# Compute twice, per-op counters and SourceCounters. From the repo root, on a GPU machine:
#   bash tests/data/trace/fa2style/lab/run.sh OUTDIR
# then: python3 tests/data/trace/fa2style/lab/parse.py OUTDIR  (writes ../measured.json)
set -u; H=$(cd "$(dirname "$0")" && pwd); O=$(realpath -m "${1:-out}"); mkdir -p "$O"; cd "$O"
nvidia-smi -L > gpu.txt; ncu --version | tail -1 >> gpu.txt
nvcc -std=c++17 -O3 -lineinfo -arch=sm_90 -o fa2 "$H/main.cu" > build.log 2>&1 || exit 1
M=$(printf '%s,' smsp__sass_inst_executed_op_shared_{ld,st}.sum smsp__inst_executed_op_shared_{ld,st}.sum \
  smsp__sass_inst_executed_op_ldsm.sum smsp__sass_inst_executed_op_ldgsts.sum \
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,atom,gmma,misc,ipa}.sum \
  l1tex__data_pipe_lsu_wavefronts_mem_shared.sum)
for c in 1 0; do
  for r in 1 2; do
    ncu --clock-control none --metrics "${M%,}" --section SourceCounters -f -o "rep_c${c}_$r" \
      ./fa2 "params_c${c}_$r.bin" $c > "ncu_c${c}_$r.txt" 2>&1
    ncu -i "rep_c${c}_$r.ncu-rep" --page raw --csv > "raw_c${c}_$r.csv" 2>&1
    ncu -i "rep_c${c}_$r.ncu-rep" --page source --csv --print-source sass > "src_c${c}_$r.csv" 2>&1
  done
done
rm -f fa2 rep_*.ncu-rep; echo "wrote $O"
