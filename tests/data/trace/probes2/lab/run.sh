#!/bin/bash
# Probe lab 2 (issues 27/29/30) on the H200, from the repo root:
#   OUT=... bash tests/data/trace/probes2/lab/run.sh      (about 2 minutes)
# 1. every launch of ../launches.json with the Hopper lab's harness (../../hopper/lab/
#    gen_main.py), all in one process (one process a launch where that fails), into
#    $OUT/probes2/outputs, then again into repeat/ and the two compared (compare.txt);
# 2. the dense MUFU dumps (dense.cu) into $OUT/probes2/dense (150 MB at most);
# 3. Nsight Compute on the generic-atomic launches (gatom_*): every shared, generic, global
#    and local counter this ncu knows with --section SourceCounters, 13 launches a report,
#    then the counters again alone (raw_all_K.csv, source_all_K.csv, raw_repeat_K.csv);
#    python3 lab/parse_ncu.py $OUT/probes2 then writes ../measured.json and ../outputs/.
# (the steps: ../../../lab_common/ncu_lab.sh)
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=${LAB_DATA:-$(cd "$L/.." && pwd)}; OUT=${OUT:-/tmp/probes2_out}
GEN=${GEN_MAIN:-$DATA/../hopper/lab/gen_main.py}
. "$L/../../../lab_common/ncu_lab.sh"
lab_start probes2 "${LAB_SECONDS:-170}" "$OUT/probes2"  # the results stay in $OUT: no archive
mkdir -p "$R/dense" "$W/repeat"
el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/log.txt"; }
pack() { :; }
nvidia-smi --query-gpu=driver_version --format=csv,noheader >> "$R/gpu.txt" 2>&1
python3 "$GEN" "$W/main.cu" > /dev/null || exit 1
nvcc -O2 -o "$W/harness" "$W/main.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; exit 1; }
nvcc -O2 -o "$W/dense" "$L/dense.cu" -lcuda >> "$R/build.txt" 2>&1 || echo "dense: no build" >> "$R/build.txt"
el built
N=$(python3 -c "import json;print(len(json.load(open('$DATA/launches.json'))['launches']))")
run_all() {  # $1: the folder; one process, or one a launch where that one fails
  timeout 30 "$W/harness" "$DATA" "$1" 0 "$N" > "$1.txt" 2>&1 && return
  echo "one process failed: $(tail -1 "$1.txt"); one a launch" >> "$1.txt"
  for ((i = 0; i < N; i++)); do
    timeout 15 "$W/harness" "$DATA" "$1" "$i" $((i + 1)) >> "$1.txt" 2>&1 || echo "launch $i rc=$?" >> "$1.txt"
  done
}
run_all "$R/outputs"; el "first run: $(tail -1 "$R/outputs.txt")"
run_all "$W/repeat"; el "repeat: $(tail -1 "$W/repeat.txt")"
: > "$R/compare.txt"
for f in "$R"/outputs/*.bin; do
  b=$(basename "$f")
  if [ ! -f "$W/repeat/$b" ]; then echo "$b: no repeat" >> "$R/compare.txt"
  elif ! cmp -s "$f" "$W/repeat/$b"; then echo "$b: differs" >> "$R/compare.txt"; cp "$W/repeat/$b" "$R/outputs/$b.repeat"; fi
done
el "compared $(ls "$R"/outputs/*.bin | wc -l) buffers: $(wc -l < "$R/compare.txt") differ or lack a repeat"
[ -x "$W/dense" ] && { timeout 60 "$W/dense" "$DATA/probes2.sm_90.cubin" "$R/dense" 150000000 > "$R/dense.txt" 2>&1; el "dense rc=$? $(tail -1 "$R/dense.txt")"; }
lab_query
lab_lsu
FIRST=$(python3 -c "import json;L=json.load(open('$DATA/launches.json'))['launches'];print(min(i for i,x in enumerate(L) if x['id'].startswith('gatom_')))")
lab_pass all 13 "$FIRST" 10 60 source
lab_pass repeat 13 "$FIRST" 10 60
el "done"; du -sh "$R"
