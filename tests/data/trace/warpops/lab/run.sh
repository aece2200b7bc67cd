#!/bin/bash
# warpops lab (op_misc, docs/hardware-model.md 9e): which warp-level instructions (shuffles,
# votes, match, redux, warp barriers, sleeps, clocks) and which uses of a shared load's value
# cost op_misc wavefronts. 110 launches of ../warpops.sm_90.cubin, counted with their source
# counters (executions per SASS instruction) and again without (the repeat). From the repo root:
#   OUT=... bash tests/data/trace/warpops/lab/run.sh      -> $OUT/warpops.tar.gz
# then: python3 tests/data/trace/warpops/lab/parse_ncu.py RESULTS (the archive unpacked)
# (the harness: ../hopper/lab/gen_main.py; the steps: ../../../lab_common/ncu_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/warpops_out}; mkdir -p "$OUT"
GEN=$DATA/../hopper/lab/gen_main.py
. "$L/../../../lab_common/ncu_lab.sh"
lab_start warpops 150
lab_harness
lab_same_cubin "$DATA/kernels/warpops.cu" "$DATA/warpops.sm_90.cubin" -diag-suppress 550 -arch=sm_90
el built
lab_plain
lab_query
lab_known "$L/metrics.txt"
# pass 1: counters and SourceCounters, 28 launches a report; pass 2: the counters only
lab_pass all 28 0 15 45 source
lab_pass repeat 55 0 10 40
lab_done
