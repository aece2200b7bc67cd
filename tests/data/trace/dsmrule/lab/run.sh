#!/bin/bash
# dsmemrule lab (issue 29): the DSMEM cost rule beyond one pattern. 62 launches of
# data/dsmrule.sm_90a.cubin (sub-word, 8- and 16-byte stores, which words of a sector a store
# writes, runs that start inside a sector, partial warps, lanes on different ranks, atomics
# at strides and with several lanes a word, 64-bit atomics, cas, red vs atom), each counted
# twice under ncu (in chunks, so that a slow chunk loses only itself). From the repo root:
#   OUT=... bash tests/data/trace/dsmrule/lab/run.sh      -> $OUT/dsmemrule.tar.gz
# FIRST=K runs only the launches from K on (one round: FIRST=92, the fourth; then
#   python3 lab/parse_ncu.py RESULTS gpu_fourth_round  appends them to ../measured.json)
# (the harness: ../hopper/lab/gen_main.py; lab/parse_ncu.py turns the results into ../measured.json)
set -u
FIRST=${FIRST:-0}
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/dsmemrule_out}; mkdir -p "$OUT"
W=$(mktemp -d); R="$W/dsmemrule"; mkdir -p "$R/outputs"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( 140 - ($(date +%s) - T0) )); }
pack() { tar -C "$W" -czf "$OUT/dsmemrule.tar.gz" dsmemrule; }
export LAB_DATA="$DATA"
nvidia-smi -L > "$R/gpu.txt" 2>&1; nvcc --version | tail -2 >> "$R/gpu.txt"; ncu --version | tail -1 >> "$R/gpu.txt"
python3 "$DATA/../hopper/lab/gen_main.py" "$W/main.cu" || exit 1
nvcc -O2 -o "$W/harness" "$W/main.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; pack; exit 1; }
nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o "$W/here.cubin" "$DATA/kernels/dsmrule.cu" >> "$R/build.txt" 2>&1
cmp -s "$W/here.cubin" "$DATA/dsmrule.sm_90a.cubin" && echo "same cubin" >> "$R/build.txt" || echo "cubin differs here" >> "$R/build.txt"
el built
N=$(python3 -c "import json;print(len(json.load(open('$DATA/launches.json'))['launches']))")
timeout 30 "$W/harness" "$DATA" "$R/outputs" "$FIRST" "$N" > "$R/plain.txt" 2>&1; el "plain rc=$? $(tail -1 "$R/plain.txt")"
pack
ncu --query-metrics --chip gh100 > "$R/query.txt" 2>&1
# the counters: metrics.txt (shared, dshared, generic, crossbar) and every dshared request or
# sector counter of the L1 side, each only if this ncu knows it
EXTRA=$(grep -oE "^l1tex__t_(sectors|requests|sector_hit_rate)[a-z_]*_mem_dshared[a-z_]*\b" "$R/query.txt" | grep -v lookup_miss | sort -u | sed "s/$/.sum/")
KNOWN=$(grep -oE "^[a-z0-9_]+\b" "$R/query.txt" | sort -u)
M=$(printf "%s\n%s\n" "$(cat "$L/metrics.txt")" "$EXTRA" | grep . | sort -u | while read -r m; do
  grep -qx "${m%.sum}" <<< "$KNOWN" && echo "$m"; done | paste -sd,)
echo "$M" | tr , '\n' > "$R/metrics_used.txt"; el "metrics $(wc -l < "$R/metrics_used.txt")"
# pass 1: counters and SourceCounters, 16 launches a report
CH=16
for ((lo = FIRST; lo < N; lo += CH)); do
  hi=$(( lo + CH < N ? lo + CH : N )); t=$(left)
  [ "$t" -lt 15 ] && { el "no time left for pass 1 chunk $lo"; break; }
  [ "$t" -gt 45 ] && t=45
  timeout "$t" ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no \
    -f -o "$W/rep_$lo" "$W/harness" "$DATA" - "$lo" "$hi" > "$R/ncu_all_$lo.txt" 2>&1; rc=$?
  ncu -i "$W/rep_$lo.ncu-rep" --page raw --csv --print-units base > "$R/raw_all_$lo.csv" 2>> "$R/ncu_all_$lo.txt"
  ncu -i "$W/rep_$lo.ncu-rep" --page source --csv --print-source sass > "$R/source_all_$lo.csv" 2>> "$R/ncu_all_$lo.txt"
  el "pass 1 launches $lo..$hi rc=$rc"; pack
done
# pass 2: the same launches, the counters only
CH=31
for ((lo = FIRST; lo < N; lo += CH)); do
  hi=$(( lo + CH < N ? lo + CH : N )); t=$(left)
  [ "$t" -lt 10 ] && { el "no time left for pass 2 chunk $lo"; break; }
  [ "$t" -gt 40 ] && t=40
  timeout "$t" ncu --clock-control none --metrics "$M" -f -o "$W/rpt_$lo" \
    "$W/harness" "$DATA" - "$lo" "$hi" > "$R/ncu_repeat_$lo.txt" 2>&1; rc=$?
  ncu -i "$W/rpt_$lo.ncu-rep" --page raw --csv --print-units base > "$R/raw_repeat_$lo.csv" 2>> "$R/ncu_repeat_$lo.txt"
  el "pass 2 launches $lo..$hi rc=$rc"; pack
done
pack; el "wrote $OUT/dsmemrule.tar.gz"; ls -la "$OUT"
