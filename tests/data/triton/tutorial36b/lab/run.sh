#!/bin/bash
# On the H200: our own tutorial-kind Triton kernels (attention, layernorm backward with a lock,
# histograms, persistent matmuls, matmul variants) JIT-run by PyTorch's Triton 3.6 (its bundled
# ptxas: ABI 7), twice under Nsight Compute. Everything into $OUT/tri36more.tar.gz.
set -u
H=$(cd "$(dirname "$0")" && pwd); W=/tmp/tri36more; rm -rf $W; mkdir -p $W
export PYTHONUNBUFFERED=1
date +%T
{ nvidia-smi -L; ncu --version | tail -1; python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)'; } > $W/gpu.txt 2>&1
cat $W/gpu.txt
ncu --query-metrics --chip gh100 > $W/query.txt 2>&1
M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_(shared|ldsm|stsm|ldgsts)[a-z_]*)\b" $W/query.txt | sort -u | sed 's/$/.sum/' | paste -sd,)
echo "$M" > $W/metrics.txt
K='regex:^(attn_fwd|ln_bwd_dx|ln_bwd_dwdb|hist|hist_atomic|mm_persist_desc|mm_persist|mm_var)$'
cd $H
for p in 0 1 2 3; do  # compile every kernel first, four at a time (no ncu): the cache both runs use
  TRITON_CACHE_DIR=$W/cache TRI_PART=$p/4 timeout 60 python3 - $W/warm$p.json < ../../../lab_common/tri_run.py > $W/warm$p.log 2>&1 &
done
wait; echo "warm $(date +%T) $(cat $W/warm?.log | grep -c '^[a-z].* [0-9a-f]\{64\}$') launches, $(cat $W/warm?.log | grep -c FAILED) failed"
for r in 1 2; do
  TRITON_CACHE_DIR=$W/cache timeout 75 ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -k "$K" -f -o $W/run$r python3 - $W/run$r.json < ../../../lab_common/tri_run.py > $W/run$r.log 2>&1; echo "run$r rc=$? $(date +%T) $(grep -c '^[a-z].* [0-9a-f]\{64\}$' $W/run$r.log) launches, $(grep -c FAILED $W/run$r.log) failed"
  ncu -i $W/run$r.ncu-rep --page raw --csv --print-units base > $W/run$r.raw.csv 2>>$W/run$r.log
  ncu -i $W/run$r.ncu-rep --page source --csv --print-source sass > $W/run$r.source.csv 2>>$W/run$r.log
done
cat $W/warm?.log | grep -B12 FAILED | head -60
cd $W && rm -f *.ncu-rep query.txt && find cache -name '*.so' -delete; tar czf $OUT/tri36more.tar.gz . && ls -la $OUT; date +%T
