#!/bin/bash
# debug-build lab (issue 29): what Nsight Compute counts for the generic LD/ST/ATOM of a -G
# build on shared memory, against the -O3 build's LDS/STS/ATOMS. The 26 launches of
# ../launches.json, counted with --section SourceCounters (13 launches a report), then the
# counters again alone (the repeat). From the repo root:
#   OUT=... bash tests/data/trace/debug_builds/lab/run.sh     -> $OUT/dbg.tar.gz
# (the harness: ../../hopper/lab/gen_main.py, or $GEN_MAIN; lab/parse_ncu.py RESULTS here;
# the steps: ../../../lab_common/ncu_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=${LAB_DATA:-$(cd "$L/.." && pwd)}; OUT=${OUT:-/tmp/dbg_out}; mkdir -p "$OUT"
GEN=${GEN_MAIN:-$DATA/../hopper/lab/gen_main.py}
. "$L/../../../lab_common/ncu_lab.sh"
lab_start dbg "${LAB_SECONDS:-210}"
lab_harness
el built
lab_plain
lab_query
lab_lsu
lab_pass all 13 0 12 75 source
lab_pass repeat 13 0 12 75
lab_done
