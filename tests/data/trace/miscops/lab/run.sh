#!/bin/bash
# miscops lab (issue 29): which instructions count op_misc wavefronts (mbarriers, fences,
# cluster barriers, elect) and the remote atomics' op_atom wavefronts. 180 launches of
# ../miscops.sm_90a.cubin, each counted twice under ncu (counters only: the source counters
# give no op_misc per instruction), then the source counters (executions per SASS
# instruction) as long as time is left. From the repo root:
#   OUT=... bash tests/data/trace/miscops/lab/run.sh     -> $OUT/miscops.tar.gz
# (the harness: ../../hopper/lab/gen_main.py, or $GEN_MAIN; lab/parse_ncu.py RESULTS here;
# the steps: ../../../lab_common/ncu_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=${LAB_DATA:-$(cd "$L/.." && pwd)}; OUT=${OUT:-/tmp/miscops_out}; mkdir -p "$OUT"
GEN=${GEN_MAIN:-$DATA/../hopper/lab/gen_main.py}
. "$L/../../../lab_common/ncu_lab.sh"
lab_start miscops 138
lab_harness
lab_same_cubin "$DATA/kernels/miscops.cu" "$DATA/miscops.sm_90a.cubin" -diag-suppress 550 -gencode=arch=compute_90a,code=sm_90a
el built
lab_plain
lab_query
# the counters: metrics.txt and every shared-memory counter that speaks of misc, membar,
# barriers or syncs, each only if this ncu knows it
EXTRA=$(grep -oE "^(l1tex|smsp|sm)__[a-z0-9_]*(misc|membar|mbarrier|syncs|cgabar|fence|barrier)[a-z0-9_]*\b" "$R/query.txt" | grep -vE "pcsamp|warps_issue_stalled|cycles|pct|ratio|per_" | sort -u | head -24 | sed "s/$/.sum/")
lab_known "$L/metrics.txt" <(echo "$EXTRA")
# pass 1 and pass 2: the counters, 60 launches a report
lab_pass all 60 0 12 40
lab_pass repeat 60 0 12 40
# pass 3: executions per SASS instruction (SourceCounters), while time is left
CH=30
for ((lo = 0; lo < N; lo += CH)); do
  hi=$(( lo + CH < N ? lo + CH : N )); t=$(left)
  [ "$t" -lt 10 ] && { el "no time left for source chunk $lo"; break; }
  [ "$t" -gt 30 ] && t=30
  timeout "$t" ncu --clock-control none --metrics smsp__inst_executed.sum --section SourceCounters --import-source no \
    -f -o "$W/src_$lo" "$W/harness" "$DATA" - "$lo" "$hi" > "$R/ncu_src_$lo.txt" 2>&1; rc=$?
  ncu -i "$W/src_$lo.ncu-rep" --page source --csv --print-source sass > "$R/source_$lo.csv" 2>> "$R/ncu_src_$lo.txt"
  el "source launches $lo..$hi rc=$rc"; pack
done
lab_done
