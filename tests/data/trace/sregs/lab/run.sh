#!/bin/bash
# sregs lab (op_misc, docs/hardware-model.md 9e), after ../warpops and ../globalops: special
# registers read with 1D and 2D blocks, counted loops with and without memory, and a
# transpose, CTA barriers (once, and n times in a loop), to find what the earlier labs' transposes and tiled matmuls add (1 a warp).
# 43 launches of ../sregs.sm_90.cubin, counted with their source counters and again without.
# From the repo root:
#   OUT=... bash tests/data/trace/sregs/lab/run.sh      -> $OUT/sregs.tar.gz
# then: python3 tests/data/trace/sregs/lab/parse_ncu.py RESULTS (the archive unpacked)
# (the harness: ../hopper/lab/gen_main.py; the steps: ../../../lab_common/ncu_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/sregs_out}; mkdir -p "$OUT"
GEN=$DATA/../hopper/lab/gen_main.py
. "$L/../../../lab_common/ncu_lab.sh"
lab_start sregs 100
lab_harness
lab_same_cubin "$DATA/kernels/sregs.cu" "$DATA/sregs.sm_90.cubin" -diag-suppress 550 -arch=sm_90
el built
lab_plain
lab_query
lab_known "$L/metrics.txt"
# pass 1: counters and SourceCounters, 28 launches a report; pass 2: the counters only
lab_pass all 28 0 15 45 source
lab_pass repeat 55 0 10 40
lab_done
