#!/bin/bash
# The view kernel's lab (issue 29): view_reverse(View v, float *out) with its struct's three
# fields (a pointer, n, stride) given as a host program gives them, 18 launches of
# ../view.sm_90.cubin (../launches.json), run once plainly (out/ dumped), then counted twice
# under ncu: the shared-memory counters with SourceCounters, then the counters alone. About
# a minute. From the repo root:
#   OUT=... bash tests/data/trace/fields/lab/run.sh      -> $OUT/fields.tar.gz
# then python3 tests/data/trace/fields/lab/parse_ncu.py RESULTS (the unpacked fields/ folder)
# (the harness: ../../hopper/lab/gen_main.py)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/fields_out}; mkdir -p "$OUT"
W=$(mktemp -d); R="$W/fields"; mkdir -p "$R/outputs"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
pack() { tar -C "$W" -czf "$OUT/fields.tar.gz" fields; }
export LAB_DATA="$DATA"
nvidia-smi -L > "$R/gpu.txt" 2>&1; nvcc --version | tail -2 >> "$R/gpu.txt"; ncu --version | tail -1 >> "$R/gpu.txt"
python3 "$DATA/../hopper/lab/gen_main.py" "$W/main.cu" || exit 1
nvcc -O2 -o "$W/harness" "$W/main.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; pack; exit 1; }
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o "$W/here.cubin" "$DATA/view.cu" >> "$R/build.txt" 2>&1
cmp -s "$W/here.cubin" "$DATA/view.sm_90.cubin" && echo "same cubin" >> "$R/build.txt" || echo "cubin differs here" >> "$R/build.txt"
el built
N=$(python3 -c "import json;print(len(json.load(open('$DATA/launches.json'))['launches']))")
timeout 30 "$W/harness" "$DATA" "$R/outputs" 0 "$N" > "$R/plain.txt" 2>&1; el "plain rc=$? $(tail -1 "$R/plain.txt")"
pack
ncu --query-metrics --chip gh100 > "$R/query.txt" 2>&1
KNOWN=$(grep -oE "^[a-z0-9_]+\b" "$R/query.txt" | sort -u)
M=$(grep . "$DATA/../dsmrule/lab/metrics.txt" | sort -u | while read -r m; do
  grep -qx "${m%.sum}" <<< "$KNOWN" && echo "$m"; done | paste -sd,)
echo "$M" | tr , '\n' > "$R/metrics_used.txt"; el "metrics $(wc -l < "$R/metrics_used.txt")"
timeout 60 ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no \
  -f -o "$W/rep" "$W/harness" "$DATA" - 0 "$N" > "$R/ncu_all_0.txt" 2>&1; el "pass 1 rc=$?"
ncu -i "$W/rep.ncu-rep" --page raw --csv --print-units base > "$R/raw_all_0.csv" 2>> "$R/ncu_all_0.txt"
ncu -i "$W/rep.ncu-rep" --page source --csv --print-source sass > "$R/source_all_0.csv" 2>> "$R/ncu_all_0.txt"
timeout 45 ncu --clock-control none --metrics "$M" -f -o "$W/rpt" "$W/harness" "$DATA" - 0 "$N" \
  > "$R/ncu_repeat_0.txt" 2>&1; el "pass 2 rc=$?"
ncu -i "$W/rpt.ncu-rep" --page raw --csv --print-units base > "$R/raw_repeat_0.csv" 2>> "$R/ncu_repeat_0.txt"
pack; el "wrote $OUT/fields.tar.gz"; ls -la "$OUT"
