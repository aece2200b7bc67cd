#!/bin/bash
# warpops lab (op_misc, docs/hardware-model.md 9e): which warp-level instructions (shuffles,
# votes, match, redux, warp barriers, sleeps, clocks) and which uses of a shared load's value
# cost op_misc wavefronts. 110 launches of ../warpops.sm_90.cubin, counted with their source
# counters (executions per SASS instruction) and again without (the repeat). From the repo root:
#   OUT=... bash tests/data/trace/warpops/lab/run.sh      -> $OUT/warpops.tar.gz
# then: python3 tests/data/lab_common/misc_lab_parse.py warpops RESULTS (the archive unpacked)
# (the steps: ../../../lab_common/ncu_lab.sh and misc_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/warpops_out}; mkdir -p "$OUT"
. "$L/../../../lab_common/ncu_lab.sh"
. "$L/../../../lab_common/misc_lab.sh"
misc_lab warpops 150 kernels/warpops.cu warpops.sm_90.cubin -diag-suppress 550 -arch=sm_90
