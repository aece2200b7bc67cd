# What the Nsight Compute labs' run.sh share (tests/data/trace/*/lab/run.sh; each sources it:
# . "$L/../../../lab_common/ncu_lab.sh"): the results folder and its archive, the clock, the
# GPU's and tools' versions, the Hopper lab's harness built, the kept cubin built again and
# compared, the launches run once plainly, the counters this ncu knows, and ncu's passes over
# chunks of launches. Bash and the GPU machine's tools only; run by hand there.
#
# A lab sets DATA (its folder: launches.json), OUT (where the archive goes) and GEN (the
# harness's generator), then calls lab_start NAME SECONDS and what it needs of the rest.

# lab_start NAME SECONDS [RESULTS]: the work folder W, the results R (RESULTS, default
# $W/NAME, archived as $OUT/NAME.tar.gz) with outputs/ in it, the clock (SECONDS in all: el,
# left) and gpu.txt, the GPU's and the tools' versions
lab_start() {
  LAB_NAME=$1; LAB_BUDGET=$2
  W=$(mktemp -d); R=${3:-$W/$1}; mkdir -p "$R/outputs"
  T0=$(date +%s)
  export LAB_DATA="$DATA"
  nvidia-smi -L > "$R/gpu.txt" 2>&1; nvcc --version | tail -2 >> "$R/gpu.txt"; ncu --version | tail -1 >> "$R/gpu.txt"
}
el() { echo "[$(( $(date +%s) - T0 ))s] $*"; }
left() { echo $(( LAB_BUDGET - ($(date +%s) - T0) )); }
pack() { tar -C "$W" -czf "$OUT/$LAB_NAME.tar.gz" "$LAB_NAME"; }

# lab_harness: the Hopper lab's harness, written by $GEN and built into $W/harness
lab_harness() {
  python3 "$GEN" "$W/main.cu" || exit 1
  nvcc -O2 -o "$W/harness" "$W/main.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; pack; exit 1; }
}

# lab_same_cubin SOURCE KEPT NVCC_ARGS...: the kept cubin built again here; build.txt says
# whether it is the same
lab_same_cubin() {
  local src=$1 kept=$2; shift 2
  nvcc -cubin -lineinfo -O3 "$@" -o "$W/here.cubin" "$src" >> "$R/build.txt" 2>&1
  cmp -s "$W/here.cubin" "$kept" && echo "same cubin" >> "$R/build.txt" || echo "cubin differs here" >> "$R/build.txt"
}

# lab_plain [FIRST]: N, the launches of launches.json; those from FIRST on run once plainly,
# their buffers into outputs/
lab_plain() {
  N=$(python3 -c "import json;print(len(json.load(open('$DATA/launches.json'))['launches']))")
  timeout 30 "$W/harness" "$DATA" "$R/outputs" "${1:-0}" "$N" > "$R/plain.txt" 2>&1; el "plain rc=$? $(tail -1 "$R/plain.txt")"
  pack
}

# lab_query: the counters this ncu knows (query.txt)
lab_query() { ncu --query-metrics --chip gh100 > "$R/query.txt" 2>&1; }

# lab_known LIST...: M, the counters of the lists (NAME.sum a line) this ncu knows
lab_known() {
  local known; known=$(grep -oE "^[a-z0-9_]+\b" "$R/query.txt" | sort -u)
  M=$(cat "$@" | grep . | sort -u | while read -r m; do
    grep -qx "${m%.sum}" <<< "$known" && echo "$m"; done | paste -sd,)
  lab_used
}

# lab_lsu: M, every shared-memory request, wavefront and conflict counter, every generic and
# global instruction counter, and the L1's generic and global request, sector and wavefront
# counters, each only if this ncu knows it
lab_lsu() {
  local known; known=$(grep -oE "^[a-z0-9_]+\b" "$R/query.txt" | sort -u)
  M=$(grep -E "^(l1tex__data_pipe_lsu_wavefronts(_mem_shared[a-z_]*)?|l1tex__data_bank_conflicts_pipe_lsu[a-z_]*|l1tex__data_bank_conflicts_type_arbitration|smsp__(sass_)?inst_executed(_op_(shared|generic|global|local|atom|red)[a-z_]*)?|l1tex__t_(requests|sectors)_pipe_lsu_mem_(global|generic|local)(_op_(ld|st|atom|red))?|l1tex__data_pipe_lsu_wavefronts_mem_(lg|global|generic)[a-z_]*)$" <<< "$known" \
    | grep -vE "pred_off|lookup|hit|miss|dot_[a-z]+_[a-z]|_per_" | sort -u | head -100 | sed "s/$/.sum/" | paste -sd,)
  lab_used
}
lab_used() { echo "$M" | tr , '\n' > "$R/metrics_used.txt"; el "metrics $(wc -l < "$R/metrics_used.txt")"; }

# lab_pass PASS CHUNK FIRST LEAST MOST [source]: the counters M of launches FIRST..N, CHUNK
# launches a report (with SourceCounters where the sixth word is source), each report given
# what time is left, at most MOST seconds, none once less than LEAST is left: raw_PASS_K.csv
# (and source_PASS_K.csv) for the chunk that starts at K
lab_pass() {
  local pass=$1 ch=$2 first=$3 least=$4 most=$5 S="" lo hi t rc
  [ "${6:-}" = source ] && S="--section SourceCounters --import-source no"
  for ((lo = first; lo < N; lo += ch)); do
    hi=$(( lo + ch < N ? lo + ch : N )); t=$(left)
    [ "$t" -lt "$least" ] && { el "no time left for $pass chunk $lo"; break; }
    [ "$t" -gt "$most" ] && t=$most
    timeout "$t" ncu --clock-control none --metrics "$M" $S -f -o "$W/rep_${pass}_$lo" \
      "$W/harness" "$DATA" - "$lo" "$hi" > "$R/ncu_${pass}_$lo.txt" 2>&1; rc=$?
    ncu -i "$W/rep_${pass}_$lo.ncu-rep" --page raw --csv --print-units base > "$R/raw_${pass}_$lo.csv" 2>> "$R/ncu_${pass}_$lo.txt"
    [ -n "$S" ] && ncu -i "$W/rep_${pass}_$lo.ncu-rep" --page source --csv --print-source sass > "$R/source_${pass}_$lo.csv" 2>> "$R/ncu_${pass}_$lo.txt"
    el "pass $pass launches $lo..$hi rc=$rc"; pack
  done
}

# lab_done: the archive written and listed
lab_done() { pack; el "wrote $OUT/$LAB_NAME.tar.gz"; ls -la "$OUT"; }
