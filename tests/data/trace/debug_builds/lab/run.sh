#!/bin/bash
# debug-build lab (issue 29): what Nsight Compute counts for the generic LD/ST/ATOM of a -G
# build on shared memory, against the -O3 build's LDS/STS/ATOMS. The 26 launches of
# ../launches.json, counted with --section SourceCounters (13 launches a report), then the
# counters again alone (the repeat). From the repo root:
#   OUT=... bash tests/data/trace/debug_builds/lab/run.sh     -> $OUT/dbg.tar.gz
# (the harness: ../../hopper/lab/gen_main.py, or $GEN_MAIN; lab/parse_ncu.py RESULTS here)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=${LAB_DATA:-$(cd "$L/.." && pwd)}; OUT=${OUT:-/tmp/dbg_out}; mkdir -p "$OUT"
GEN=${GEN_MAIN:-$DATA/../hopper/lab/gen_main.py}
W=$(mktemp -d); R="$W/dbg"; mkdir -p "$R/outputs"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( ${LAB_SECONDS:-210} - ($(date +%s) - T0) )); }
pack() { tar -C "$W" -czf "$OUT/dbg.tar.gz" dbg; }
export LAB_DATA="$DATA"
nvidia-smi -L > "$R/gpu.txt" 2>&1; nvcc --version | tail -2 >> "$R/gpu.txt"; ncu --version | tail -1 >> "$R/gpu.txt"
python3 "$GEN" "$W/main.cu" || exit 1
nvcc -O2 -o "$W/harness" "$W/main.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; pack; exit 1; }
el built
N=$(python3 -c "import json;print(len(json.load(open('$DATA/launches.json'))['launches']))")
timeout 30 "$W/harness" "$DATA" "$R/outputs" 0 "$N" > "$R/plain.txt" 2>&1; el "plain rc=$? $(tail -1 "$R/plain.txt")"
pack
ncu --query-metrics --chip gh100 > "$R/query.txt" 2>&1
# the counters: every shared-memory request, wavefront and conflict counter, every generic
# and global instruction counter, and the L1's generic and global request, sector and
# wavefront counters (each only if this ncu knows it)
KNOWN=$(grep -oE "^[a-z0-9_]+\b" "$R/query.txt" | sort -u)
M=$(grep -E "^(l1tex__data_pipe_lsu_wavefronts(_mem_shared[a-z_]*)?|l1tex__data_bank_conflicts_pipe_lsu[a-z_]*|l1tex__data_bank_conflicts_type_arbitration|smsp__(sass_)?inst_executed(_op_(shared|generic|global|local|atom|red)[a-z_]*)?|l1tex__t_(requests|sectors)_pipe_lsu_mem_(global|generic|local)(_op_(ld|st|atom|red))?|l1tex__data_pipe_lsu_wavefronts_mem_(lg|global|generic)[a-z_]*)$" <<< "$KNOWN" \
  | grep -vE "pred_off|lookup|hit|miss|dot_[a-z]+_[a-z]|_per_" | sort -u | head -100 | sed "s/$/.sum/" | paste -sd,)
echo "$M" | tr , '\n' > "$R/metrics_used.txt"; el "metrics $(wc -l < "$R/metrics_used.txt")"
CH=13
for pass in all repeat; do
  for ((lo = 0; lo < N; lo += CH)); do
    hi=$(( lo + CH < N ? lo + CH : N )); t=$(left)
    [ "$t" -lt 12 ] && { el "no time left for $pass chunk $lo"; break; }
    [ "$t" -gt 75 ] && t=75
    if [ $pass = all ]; then S="--section SourceCounters --import-source no"; else S=""; fi
    timeout "$t" ncu --clock-control none --metrics "$M" $S -f -o "$W/rep_${pass}_$lo" \
      "$W/harness" "$DATA" - "$lo" "$hi" > "$R/ncu_${pass}_$lo.txt" 2>&1; rc=$?
    ncu -i "$W/rep_${pass}_$lo.ncu-rep" --page raw --csv --print-units base > "$R/raw_${pass}_$lo.csv" 2>> "$R/ncu_${pass}_$lo.txt"
    [ $pass = all ] && ncu -i "$W/rep_${pass}_$lo.ncu-rep" --page source --csv --print-source sass > "$R/source_${pass}_$lo.csv" 2>> "$R/ncu_${pass}_$lo.txt"
    el "pass $pass launches $lo..$hi rc=$rc"; pack
  done
done
pack; el "wrote $OUT/dbg.tar.gz"; ls -la "$OUT"
