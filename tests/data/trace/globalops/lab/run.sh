#!/bin/bash
# globalops lab (op_misc, docs/hardware-model.md 9e), after ../warpops: which global-memory
# instructions cost op_misc wavefronts when run and when reached with every lane's guard false,
# and what a transpose's global-shared-global path adds. 68 launches of
# ../globalops.sm_90.cubin, counted with their source counters and again without. From the
# repo root:
#   OUT=... bash tests/data/trace/globalops/lab/run.sh      -> $OUT/globalops.tar.gz
# then: python3 tests/data/trace/globalops/lab/parse_ncu.py RESULTS (the archive unpacked)
# (the harness: ../hopper/lab/gen_main.py; the steps: ../../../lab_common/ncu_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/globalops_out}; mkdir -p "$OUT"
GEN=$DATA/../hopper/lab/gen_main.py
. "$L/../../../lab_common/ncu_lab.sh"
lab_start globalops 150
lab_harness
lab_same_cubin "$DATA/kernels/globalops.cu" "$DATA/globalops.sm_90.cubin" -diag-suppress 550 -arch=sm_90
el built
lab_plain
lab_query
lab_known "$L/metrics.txt"
# pass 1: counters and SourceCounters, 28 launches a report; pass 2: the counters only
lab_pass all 28 0 15 45 source
lab_pass repeat 55 0 10 40
lab_done
