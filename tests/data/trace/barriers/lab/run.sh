#!/bin/bash
# barriers lab (op_misc, docs/hardware-model.md 9e), after ../sregs found four CTA barriers
# back to back costing 1: barriers with nothing, arithmetic, shared or global memory or a
# shuffle between them, named and reducing barriers, an mbarrier's init, the lane masks.
# 42 launches of ../barriers.sm_90.cubin, counted with their source counters and again
# without. From the repo root:
#   OUT=... bash tests/data/trace/barriers/lab/run.sh      -> $OUT/barriers.tar.gz
# then: python3 tests/data/trace/barriers/lab/parse_ncu.py RESULTS (the archive unpacked)
# (the harness: ../hopper/lab/gen_main.py; the steps: ../../../lab_common/ncu_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/barriers_out}; mkdir -p "$OUT"
GEN=$DATA/../hopper/lab/gen_main.py
. "$L/../../../lab_common/ncu_lab.sh"
lab_start barriers 100
lab_harness
lab_same_cubin "$DATA/kernels/barriers.cu" "$DATA/barriers.sm_90.cubin" -diag-suppress 550 -arch=sm_90
el built
lab_plain
lab_query
lab_known "$L/metrics.txt"
# pass 1: counters and SourceCounters, 28 launches a report; pass 2: the counters only
lab_pass all 28 0 15 45 source
lab_pass repeat 55 0 10 40
lab_done
