#!/bin/bash
# genatom lab (op_misc, docs/hardware-model.md 9e): atomics through a generic pointer to shared
# or global memory, of each width and type (the half2 loops of ../casloops read 1 a warp
# beyond the rule). 28 launches of ../genatom.sm_90.cubin, counted with their source counters
# and again without. From the repo root:
#   OUT=... bash tests/data/trace/genatom/lab/run.sh      -> $OUT/genatom.tar.gz
# then: python3 tests/data/lab_common/misc_lab_parse.py genatom RESULTS (the archive unpacked)
# (the steps: ../../../lab_common/ncu_lab.sh and misc_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/genatom_out}; mkdir -p "$OUT"
. "$L/../../../lab_common/ncu_lab.sh"
. "$L/../../../lab_common/misc_lab.sh"
misc_lab genatom 90 kernels/genatom.cu genatom.sm_90.cubin -diag-suppress 550 -arch=sm_90
