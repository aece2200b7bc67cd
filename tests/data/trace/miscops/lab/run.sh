#!/bin/bash
# miscops lab (issue 29): which instructions count op_misc wavefronts (mbarriers, fences,
# cluster barriers, elect) and the remote atomics' op_atom wavefronts. 180 launches of
# ../miscops.sm_90a.cubin, each counted twice under ncu (counters only: the source counters
# give no op_misc per instruction), then the source counters (executions per SASS
# instruction) as long as time is left. From the repo root:
#   OUT=... bash tests/data/trace/miscops/lab/run.sh     -> $OUT/miscops.tar.gz
# (the harness: ../../hopper/lab/gen_main.py, or $GEN_MAIN; lab/parse_ncu.py RESULTS here)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=${LAB_DATA:-$(cd "$L/.." && pwd)}; OUT=${OUT:-/tmp/miscops_out}; mkdir -p "$OUT"
GEN=${GEN_MAIN:-$DATA/../hopper/lab/gen_main.py}
W=$(mktemp -d); R="$W/miscops"; mkdir -p "$R/outputs"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( 138 - ($(date +%s) - T0) )); }
pack() { tar -C "$W" -czf "$OUT/miscops.tar.gz" miscops; }
export LAB_DATA="$DATA"
nvidia-smi -L > "$R/gpu.txt" 2>&1; nvcc --version | tail -2 >> "$R/gpu.txt"; ncu --version | tail -1 >> "$R/gpu.txt"
python3 "$GEN" "$W/main.cu" || exit 1
nvcc -O2 -o "$W/harness" "$W/main.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; pack; exit 1; }
nvcc -cubin -lineinfo -O3 -diag-suppress 550 -gencode=arch=compute_90a,code=sm_90a -o "$W/here.cubin" "$DATA/kernels/miscops.cu" >> "$R/build.txt" 2>&1
cmp -s "$W/here.cubin" "$DATA/miscops.sm_90a.cubin" && echo "same cubin" >> "$R/build.txt" || echo "cubin differs here" >> "$R/build.txt"
el built
N=$(python3 -c "import json;print(len(json.load(open('$DATA/launches.json'))['launches']))")
timeout 30 "$W/harness" "$DATA" "$R/outputs" 0 "$N" > "$R/plain.txt" 2>&1; el "plain rc=$? $(tail -1 "$R/plain.txt")"
pack
ncu --query-metrics --chip gh100 > "$R/query.txt" 2>&1
# the counters: metrics.txt and every shared-memory counter that speaks of misc, membar,
# barriers or syncs, each only if this ncu knows it
EXTRA=$(grep -oE "^(l1tex|smsp|sm)__[a-z0-9_]*(misc|membar|mbarrier|syncs|cgabar|fence|barrier)[a-z0-9_]*\b" "$R/query.txt" | grep -vE "pcsamp|warps_issue_stalled|cycles|pct|ratio|per_" | sort -u | head -24 | sed "s/$/.sum/")
KNOWN=$(grep -oE "^[a-z0-9_]+\b" "$R/query.txt" | sort -u)
M=$(printf "%s\n%s\n" "$(cat "$L/metrics.txt")" "$EXTRA" | grep . | sort -u | while read -r m; do
  grep -qx "${m%.sum}" <<< "$KNOWN" && echo "$m"; done | paste -sd,)
echo "$M" | tr , '\n' > "$R/metrics_used.txt"; el "metrics $(wc -l < "$R/metrics_used.txt")"
# pass 1 and pass 2: the counters, 60 launches a report
CH=60
for pass in all repeat; do
  for ((lo = 0; lo < N; lo += CH)); do
    hi=$(( lo + CH < N ? lo + CH : N )); t=$(left)
    [ "$t" -lt 12 ] && { el "no time left for $pass chunk $lo"; break; }
    [ "$t" -gt 40 ] && t=40
    timeout "$t" ncu --clock-control none --metrics "$M" -f -o "$W/rep_${pass}_$lo" \
      "$W/harness" "$DATA" - "$lo" "$hi" > "$R/ncu_${pass}_$lo.txt" 2>&1; rc=$?
    ncu -i "$W/rep_${pass}_$lo.ncu-rep" --page raw --csv --print-units base > "$R/raw_${pass}_$lo.csv" 2>> "$R/ncu_${pass}_$lo.txt"
    el "pass $pass launches $lo..$hi rc=$rc"; pack
  done
done
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
pack; el "wrote $OUT/miscops.tar.gz"; ls -la "$OUT"
