#!/bin/bash
# miscops lab, second round (issue 29): the launches the first round lost to the cluster
# barrier it ran in partial warps (c_sync_* now run it in every lane), then every launch again
# (the repeat). Run from the repo root with the lab folder as .lab/miscops/data (this folder
# copied there): bash .lab/miscops/run2.sh -> $OUT/miscops2.tar.gz
set -u
ROOT=$(pwd); DATA="$ROOT/.lab/miscops/data"; OUT=${OUT:-/tmp/miscops_out}; mkdir -p "$OUT"
GEN="$ROOT/tests/data/trace/hopper/lab/gen_main.py"; [ -f "$GEN" ] || GEN="$ROOT/.lab/miscops/gen_main.py"
W=$(mktemp -d); R="$W/miscops2"; mkdir -p "$R"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( 140 - ($(date +%s) - T0) )); }
pack() { tar -C "$W" -czf "$OUT/miscops2.tar.gz" miscops2; }
export LAB_DATA="$DATA"
nvidia-smi -L > "$R/gpu.txt" 2>&1; nvcc --version | tail -2 >> "$R/gpu.txt"; ncu --version | tail -1 >> "$R/gpu.txt"
python3 "$GEN" "$W/main.cu" || exit 1
nvcc -O2 -o "$W/harness" "$W/main.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; pack; exit 1; }
el built
N=$(python3 -c "import json;print(len(json.load(open('$DATA/launches.json'))['launches']))")
timeout 20 "$W/harness" "$DATA" - 116 "$N" > "$R/plain.txt" 2>&1; el "plain 116..$N rc=$? $(tail -1 "$R/plain.txt")"
M=$(cat "$DATA/lab/metrics_round2.txt" | paste -sd,)
run_range() {  # name lo hi
  local t; t=$(left); [ "$t" -lt 12 ] && { el "no time left for $1"; return; }
  [ "$t" -gt 45 ] && t=45
  timeout "$t" ncu --clock-control none --metrics "$M" -f -o "$W/rep_$1" \
    "$W/harness" "$DATA" - "$2" "$3" > "$R/ncu_$1.txt" 2>&1; local rc=$?
  ncu -i "$W/rep_$1.ncu-rep" --page raw --csv --print-units base > "$R/raw_$1.csv" 2>> "$R/ncu_$1.txt"
  el "$1 launches $2..$3 rc=$rc"; pack
}
run_range all_116 116 "$N"
run_range repeat_116 116 "$N"
run_range repeat_0 0 58
run_range repeat_58 58 116
pack; el "wrote $OUT/miscops2.tar.gz"; ls -la "$OUT"
