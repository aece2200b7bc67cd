#!/bin/bash
# On the H200 (or H100): the ops36 sweep's launches that touch shared memory (gpu_launches.py:
# 106 of launches.py's, kernels in kern.py) JIT-run by PyTorch's Triton 3.6, every kernel
# compiled first without the profiler (four processes), then every launch under Nsight Compute
# twice (--clock-control none, the shared-memory counters, the SourceCounters section).
# Usage: bash tests/data/triton/ops36/lab/run.sh   ($OUT set: results into $OUT/ops36.tar.gz)
# (the steps: ../../../lab_common/tri_lab.sh)
set -u
H=$(cd "$(dirname "$0")" && pwd)
. "$H/../../../lab_common/tri_lab.sh"
export TRI_KERNELS=kern TRI_LAUNCHES=gpu_launches
rm -rf /tmp/ops36
echo "start $(date +%T)"
tri_start /tmp/ops36
echo "metrics $(echo "$M" | tr , '\n' | wc -l) $(date +%T)"
cd "$H"
tri_launches
N=$(wc -l < $W/list.txt); K=$(awk '{print $2}' $W/list.txt | sort -u | paste -sd'|')
echo "launches $N kernels $(echo "$K" | tr '|' '\n' | wc -l)"
tri_warm 4 90
for r in $(seq 1 "${RUNS:-2}"); do tri_run $r 100 "regex:^($K)\$"; done  # RUNS=1: one run under ncu (a short device call)
tri_failed 40
tri_pack ops36.tar.gz; echo "end $(date +%T)"
