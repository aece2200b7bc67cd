#!/bin/bash
# dsmemrule lab (issue 29): the DSMEM cost rule beyond one pattern. 62 launches of
# data/dsmrule.sm_90a.cubin (sub-word, 8- and 16-byte stores, which words of a sector a store
# writes, runs that start inside a sector, partial warps, lanes on different ranks, atomics
# at strides and with several lanes a word, 64-bit atomics, cas, red vs atom), each counted
# twice under ncu (in chunks, so that a slow chunk loses only itself). From the repo root:
#   OUT=... bash tests/data/trace/dsmrule/lab/run.sh      -> $OUT/dsmemrule.tar.gz
# FIRST=K runs only the launches from K on (one round: FIRST=92, the fourth; then
#   python3 lab/parse_ncu.py RESULTS gpu_fourth_round  appends them to ../measured.json)
# (the harness: ../hopper/lab/gen_main.py; lab/parse_ncu.py turns the results into ../measured.json;
# the steps: ../../../lab_common/ncu_lab.sh)
set -u
FIRST=${FIRST:-0}
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/dsmemrule_out}; mkdir -p "$OUT"
GEN=$DATA/../hopper/lab/gen_main.py
. "$L/../../../lab_common/ncu_lab.sh"
lab_start dsmemrule 140
lab_harness
lab_same_cubin "$DATA/kernels/dsmrule.cu" "$DATA/dsmrule.sm_90a.cubin" -gencode=arch=compute_90a,code=sm_90a
el built
lab_plain "$FIRST"
lab_query
# the counters: metrics.txt (shared, dshared, generic, crossbar) and every dshared request or
# sector counter of the L1 side, each only if this ncu knows it
EXTRA=$(grep -oE "^l1tex__t_(sectors|requests|sector_hit_rate)[a-z_]*_mem_dshared[a-z_]*\b" "$R/query.txt" | grep -v lookup_miss | sort -u | sed "s/$/.sum/")
lab_known "$L/metrics.txt" <(echo "$EXTRA")
# pass 1: counters and SourceCounters, 16 launches a report; pass 2: the counters only
lab_pass all 16 "$FIRST" 15 45 source
lab_pass repeat 31 "$FIRST" 10 40
lab_done
