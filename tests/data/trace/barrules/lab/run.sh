#!/bin/bash
# barrules lab (op_misc, docs/hardware-model.md 9e): which CTA barrier completions cost a
# wavefront. Two barriers with nothing between, with an LDC, a shared store, a global load, a
# shuffle between, after thread 0's arithmetic in a branch, after its eight mbarrier inits (as
# miscops' m_base), one init, the inits and fence.proxy.async.shared::cta, the fence alone; one
# barrier after the same. 28 launches of ../barrules.sm_90a.cubin (1 and 4 warps), counted with
# their source counters and again without, only the per-op shared counters and inst_executed
# (metrics.txt), at most 90 s of the GPU machine (about a minute). From the repo root:
#   OUT=... bash tests/data/trace/barrules/lab/run.sh      -> $OUT/barrules.tar.gz
# then: python3 tests/data/lab_common/misc_lab_parse.py barrules RESULTS (the archive unpacked)
# (the steps: ../../../lab_common/ncu_lab.sh and misc_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/barrules_out}; mkdir -p "$OUT"
. "$L/../../../lab_common/ncu_lab.sh"
. "$L/../../../lab_common/misc_lab.sh"
MISC_METRICS=$L/metrics.txt MISC_REPEAT_CHUNK=28
misc_lab barrules 90 kernels/barrules.cu barrules.sm_90a.cubin -diag-suppress 550 -arch=sm_90a
