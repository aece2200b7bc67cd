#!/bin/bash
# Triton 3.6 (PyTorch's) JIT of kernels.py's launches, compiled once without the profiler, then
# every launch under Nsight Compute twice. Usage: lab/run.sh OUTDIR (from .lab/emptyreq/run.sh)
set -u
H=$(cd "$(dirname "$0")" && pwd); W=$1; mkdir -p $W
export PYTHONUNBUFFERED=1
{ nvidia-smi -L; ncu --version | tail -1; python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)'; } > $W/gpu.txt 2>&1
cat $W/gpu.txt
ncu --query-metrics --chip gh100 > $W/query.txt 2>&1
M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_(shared|ldsm|stsm|ldgsts)[a-z_]*)\b" $W/query.txt | sort -u | sed 's/$/.sum/' | paste -sd,)
cd $H
TRITON_CACHE_DIR=$W/cache timeout 40 python3 - $W/warm.json < ../../../lab_common/tri_run.py > $W/warm.log 2>&1
echo "warm rc=$? $(date +%T) $(grep -c FAILED $W/warm.log) failed"; tail -3 $W/warm.log
for r in 1 2; do
  TRITON_CACHE_DIR=$W/cache timeout 30 ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -k 'regex:^dot_rowsum$' -f -o $W/run$r python3 - $W/run$r.json < ../../../lab_common/tri_run.py > $W/run$r.log 2>&1; echo "run$r rc=$? $(date +%T)"
  ncu -i $W/run$r.ncu-rep --page raw --csv --print-units base > $W/run$r.raw.csv 2>>$W/run$r.log
  ncu -i $W/run$r.ncu-rep --page source --csv --print-source sass > $W/run$r.source.csv 2>>$W/run$r.log
done
rm -f $W/query.txt $W/*.ncu-rep; find $W/cache -name '*.so' -delete
