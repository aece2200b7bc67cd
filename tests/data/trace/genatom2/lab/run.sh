#!/bin/bash
# genatom2 lab (op_atom, docs/hardware-model.md 9e): atomics through a generic pointer to shared
# or global memory beyond ../genatom's full-warp adds: partial warps, a warp kept off, 64-bit
# lanes on one half-warp, compare-and-swap, exchange, min, max, and, or, xor, inc, a __half add
# (a CAS loop), lanes on one word. 54 launches of ../genatom2.sm_90.cubin, counted with their
# source counters and again without, only the per-op shared counters and inst_executed
# (metrics.txt: fewer ncu passes), at most 170 s of the GPU machine. From the repo root:
#   OUT=... bash tests/data/trace/genatom2/lab/run.sh      -> $OUT/genatom2.tar.gz
# then: python3 tests/data/lab_common/misc_lab_parse.py genatom2 RESULTS (the archive unpacked)
# (the steps: ../../../lab_common/ncu_lab.sh and misc_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/genatom2_out}; mkdir -p "$OUT"
. "$L/../../../lab_common/ncu_lab.sh"
. "$L/../../../lab_common/misc_lab.sh"
MISC_METRICS=$L/metrics.txt MISC_REPEAT_CHUNK=27
misc_lab genatom2 170 kernels/genatom2.cu genatom2.sm_90.cubin -arch=sm_90
