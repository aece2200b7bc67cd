#!/bin/bash
# The view kernel's lab (issue 29): view_reverse(View v, float *out) with its struct's three
# fields (a pointer, n, stride) given as a host program gives them, 18 launches of
# ../view.sm_90.cubin (../launches.json), run once plainly (out/ dumped), then counted twice
# under ncu: the shared-memory counters with SourceCounters, then the counters alone. About
# a minute. From the repo root:
#   OUT=... bash tests/data/trace/fields/lab/run.sh      -> $OUT/fields.tar.gz
# then python3 tests/data/trace/fields/lab/parse_ncu.py RESULTS (the unpacked fields/ folder)
# (the harness: ../../hopper/lab/gen_main.py; the steps: ../../../lab_common/ncu_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/fields_out}; mkdir -p "$OUT"
GEN=$DATA/../hopper/lab/gen_main.py
. "$L/../../../lab_common/ncu_lab.sh"
lab_start fields 600  # no budget of its own: each pass one report, 60 s, then 45
lab_harness
lab_same_cubin "$DATA/view.cu" "$DATA/view.sm_90.cubin" -arch=sm_90
el built
lab_plain
lab_query
lab_known "$DATA/../dsmrule/lab/metrics.txt"
lab_pass all "$N" 0 1 60 source
lab_pass repeat "$N" 0 1 45
lab_done
