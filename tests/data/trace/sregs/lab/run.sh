#!/bin/bash
# sregs lab (op_misc, docs/hardware-model.md 9e), after ../warpops and ../globalops: special
# registers read with 1D and 2D blocks, counted loops with and without memory, and a
# transpose, CTA barriers (once, and n times in a loop), to find what the earlier labs'
# transposes and tiled matmuls add (1 a warp).
# 43 launches of ../sregs.sm_90.cubin, counted with their source counters and again without.
# From the repo root:
#   OUT=... bash tests/data/trace/sregs/lab/run.sh      -> $OUT/sregs.tar.gz
# then: python3 tests/data/lab_common/misc_lab_parse.py sregs RESULTS (the archive unpacked)
# (the steps: ../../../lab_common/ncu_lab.sh and misc_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/sregs_out}; mkdir -p "$OUT"
. "$L/../../../lab_common/ncu_lab.sh"
. "$L/../../../lab_common/misc_lab.sh"
misc_lab sregs 100 kernels/sregs.cu sregs.sm_90.cubin -diag-suppress 550 -arch=sm_90
