#!/bin/bash
# On the H200: the 43 launches again under Nsight Compute, R times (default 8), the per-op
# shared wavefront counters only (no source counters: 13 s a run); $OUT/rep.tar.gz.
# Run from the repo root: R=10 bash tests/data/triton/mma36/lab/repeat.sh
set -u
H=$PWD/tests/data/triton/mma36/lab; W=/tmp/rep; rm -rf $W; mkdir -p $W
export PYTHONUNBUFFERED=1
M=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__data_bank_conflicts_type_arbitration.sum
cd $H
TRITON_CACHE_DIR=$W/cache timeout 120 python3 - $W/warm.json < ../../../lab_common/tri_run.py > $W/warm.log 2>&1
echo "warm $(date +%T) $(grep -c FAILED $W/warm.log) failed"
for r in $(seq 1 ${R:-8}); do
  TRITON_CACHE_DIR=$W/cache timeout 100 ncu --clock-control none --metrics "$M" -k 'regex:^(mm_v|attn2)$' --csv --page raw --print-units base python3 - $W/r$r.json < ../../../lab_common/tri_run.py > $W/r$r.csv 2>$W/r$r.err
  echo "run$r rc=$? $(date +%T) $(grep -c '^"[0-9]' $W/r$r.csv) rows"
done
cd $W && tar czf $OUT/rep.tar.gz r*.csv warm.log
