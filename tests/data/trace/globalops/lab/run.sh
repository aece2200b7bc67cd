#!/bin/bash
# globalops lab (op_misc, docs/hardware-model.md 9e), after ../warpops: which global-memory
# instructions cost op_misc wavefronts when run and when reached with every lane's guard false,
# and what a transpose's global-shared-global path adds. 68 launches of
# ../globalops.sm_90.cubin, counted with their source counters and again without. From the
# repo root:
#   OUT=... bash tests/data/trace/globalops/lab/run.sh      -> $OUT/globalops.tar.gz
# then: python3 tests/data/lab_common/misc_lab_parse.py globalops RESULTS (the archive unpacked)
# (the steps: ../../../lab_common/ncu_lab.sh and misc_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/globalops_out}; mkdir -p "$OUT"
. "$L/../../../lab_common/ncu_lab.sh"
. "$L/../../../lab_common/misc_lab.sh"
misc_lab globalops 150 kernels/globalops.cu globalops.sm_90.cubin -diag-suppress 550 -arch=sm_90
