#!/bin/bash
# On the H200 (or H100): the ops36 sweep's launches that touch shared memory (gpu_launches.py:
# 106 of launches.py's, kernels in kern.py) JIT-run by PyTorch's Triton 3.6, every kernel
# compiled first without the profiler (four processes), then every launch under Nsight Compute
# twice (--clock-control none, the shared-memory counters, the SourceCounters section).
# Usage: bash tests/data/triton/ops36/lab/run.sh   ($OUT set: results into $OUT/ops36.tar.gz)
set -u
H=$(cd "$(dirname "$0")" && pwd); W=/tmp/ops36; rm -rf $W; mkdir -p $W
export PYTHONUNBUFFERED=1 TRI_KERNELS=kern TRI_LAUNCHES=gpu_launches
echo "start $(date +%T)"
{ nvidia-smi -L; ncu --version | tail -1; python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)'; } > $W/gpu.txt 2>&1
cat $W/gpu.txt
ncu --query-metrics --chip gh100 > $W/query.txt 2>&1
M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_(shared|ldsm|stsm|ldgsts)[a-z_]*)\b" $W/query.txt | sort -u | sed 's/$/.sum/' | paste -sd,)
echo "$M" > $W/metrics.txt; echo "metrics $(echo "$M" | tr , '\n' | wc -l) $(date +%T)"
cd $H
TRI_LIST=1 python3 - x < ../../../lab_common/tri_run.py > $W/list.txt
N=$(wc -l < $W/list.txt); K=$(awk '{print $2}' $W/list.txt | sort -u | paste -sd'|')
echo "launches $N kernels $(echo "$K" | tr '|' '\n' | wc -l)"
for p in 0 1 2 3; do  # compile every kernel first, four processes (no ncu): the cache both runs use
  TRITON_CACHE_DIR=$W/cache TRI_PART=$p/4 timeout 90 python3 - $W/warm$p.json < ../../../lab_common/tri_run.py > $W/warm$p.log 2>&1 &
done
wait; echo "warm $(date +%T) $(cat $W/warm?.log | grep -c '^[a-z].* [0-9a-f]\{64\}$') of $N launches, $(cat $W/warm?.log | grep -c FAILED) failed"
for r in $(seq 1 "${RUNS:-2}"); do  # RUNS=1: one run under ncu (a short device call)
  TRITON_CACHE_DIR=$W/cache timeout 100 ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -k "regex:^($K)\$" -f -o $W/run$r python3 - $W/run$r.json < ../../../lab_common/tri_run.py > $W/run$r.log 2>&1
  echo "run$r rc=$? $(date +%T) $(grep -c '^[a-z].* [0-9a-f]\{64\}$' $W/run$r.log) of $N launches, $(grep -c FAILED $W/run$r.log) failed"
  ncu -i $W/run$r.ncu-rep --page raw --csv --print-units base > $W/run$r.raw.csv 2>>$W/run$r.log
  ncu -i $W/run$r.ncu-rep --page source --csv --print-source sass > $W/run$r.source.csv 2>>$W/run$r.log
  echo "run$r pages $(date +%T) $(grep -c '^"Kernel Name"' $W/run$r.source.csv) tables"
done
cat $W/warm?.log | grep -B12 FAILED | head -40
cd $W && rm -f *.ncu-rep query.txt && find cache -name '*.so' -delete; tar czf $OUT/ops36.tar.gz . && ls -la $OUT; echo "end $(date +%T)"
