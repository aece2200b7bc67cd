#!/bin/bash
# On the H200: tutorial-shaped Triton matmuls (mma.sync) by PyTorch's Triton (its own ptxas: ABI 7),
# twice under Nsight Compute. Everything into $OUT/tri2.tar.gz.
set -u
H=$(cd "$(dirname "$0")" && pwd); W=/tmp/tri2; rm -rf $W; mkdir -p $W
export PYTHONUNBUFFERED=1
{ nvidia-smi -L; ncu --version | tail -1; python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)'; } > $W/gpu.txt 2>&1
ncu --query-metrics --chip gh100 > $W/query.txt 2>&1
M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_(shared|ldsm|stsm|ldgsts)[a-z_]*)\b" $W/query.txt | sort -u | sed 's/$/.sum/' | paste -sd,)
cd $H
for r in 1 2; do
  TRITON_CACHE_DIR=$W/cache timeout 120 ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -k regex:mm_tut -f -o $W/run$r python3 - $W/run$r.json < ../../jit36/lab/tri_run.py > $W/run$r.log 2>&1; echo "run$r rc=$?"
  ncu -i $W/run$r.ncu-rep --page raw --csv --print-units base > $W/run$r.raw.csv 2>>$W/run$r.log
  ncu -i $W/run$r.ncu-rep --page source --csv --print-source sass > $W/run$r.source.csv 2>>$W/run$r.log
done
cd $W && rm -f *.ncu-rep query.txt && tar czf $OUT/tri2.tar.gz . && ls -la $OUT
