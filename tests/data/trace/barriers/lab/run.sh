#!/bin/bash
# barriers lab (op_misc, docs/hardware-model.md 9e), after ../sregs found four CTA barriers
# back to back costing 1: barriers with nothing, arithmetic, shared or global memory or a
# shuffle between them, named and reducing barriers, an mbarrier's init, the lane masks.
# 42 launches of ../barriers.sm_90.cubin, counted with their source counters and again
# without. From the repo root:
#   OUT=... bash tests/data/trace/barriers/lab/run.sh      -> $OUT/barriers.tar.gz
# then: python3 tests/data/lab_common/misc_lab_parse.py barriers RESULTS (the archive unpacked)
# (the steps: ../../../lab_common/ncu_lab.sh and misc_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/barriers_out}; mkdir -p "$OUT"
. "$L/../../../lab_common/ncu_lab.sh"
. "$L/../../../lab_common/misc_lab.sh"
misc_lab barriers 100 kernels/barriers.cu barriers.sm_90.cubin -diag-suppress 550 -arch=sm_90
