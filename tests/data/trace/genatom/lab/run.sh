#!/bin/bash
# genatom lab (op_misc, docs/hardware-model.md 9e): atomics through a generic pointer to shared
# or global memory, of each width and type (the half2 loops of ../casloops read 1 a warp
# beyond the rule). 28 launches of ../genatom.sm_90.cubin, counted with their source counters
# and again without. From the repo root:
#   OUT=... bash tests/data/trace/genatom/lab/run.sh      -> $OUT/genatom.tar.gz
# then: python3 tests/data/trace/genatom/lab/parse_ncu.py RESULTS (the archive unpacked)
# (the harness: ../hopper/lab/gen_main.py; the steps: ../../../lab_common/ncu_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/genatom_out}; mkdir -p "$OUT"
GEN=$DATA/../hopper/lab/gen_main.py
. "$L/../../../lab_common/ncu_lab.sh"
lab_start genatom 90
lab_harness
lab_same_cubin "$DATA/kernels/genatom.cu" "$DATA/genatom.sm_90.cubin" -diag-suppress 550 -arch=sm_90
el built
lab_plain
lab_query
lab_known "$L/metrics.txt"
# pass 1: counters and SourceCounters, 28 launches a report; pass 2: the counters only
lab_pass all 28 0 15 45 source
lab_pass repeat 55 0 10 40
lab_done
