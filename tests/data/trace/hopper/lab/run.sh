#!/bin/bash
# Measure the launches of ../launches.json on an H200 with Nsight Compute, from the cubins kept
# beside it (the very binaries `shmem trace` emulates).
#   bash lab/run.sh OUTDIR [wgmma]    (needs nvcc, ncu, python3)
# Every launch runs once without the profiler (OUTDIR/outputs: its buffers and tensor maps
# after the launch, and the tensor-map encodings); then Nsight Compute measures the non-wgmma
# launches one group at a time (with "wgmma" also the wgmma probes, in three groups):
# OUTDIR/raw_*.csv (per launch), source_*.csv (per SASS instruction). Then, here:
#   python3 lab/parse_ncu.py OUTDIR
set -u
here=$(cd "$(dirname "$0")" && pwd); DATA=$(realpath "${LAB_DATA:-$(dirname "$here")}"); O=$(realpath -m "${1:-out}")
export LAB_DATA="$DATA"  # another lab laid out as ../ (launches.json, cubins): LAB_DATA=DIR
mkdir -p "$O/outputs"; work=$(mktemp -d)
python3 "$here/gen_main.py" "$work/main.cu" || exit 1
nvidia-smi -L > "$O/gpu.txt"; nvcc --version | tail -2 >> "$O/gpu.txt"; ncu --version | tail -1 >> "$O/gpu.txt"
nvcc -O2 -o "$work/harness" "$work/main.cu" -lcuda || exit 1
N=$(python3 -c "import json;print(len(json.load(open('$DATA/launches.json'))['launches']))")
K=$(python3 -c "import json;print(sum(1 for l in json.load(open('$DATA/launches.json'))['launches'] if not l['id'].startswith('wg_')))")
H=$(( (N - K) / 3 + 1 ))
timeout 20 "$work/harness" "$DATA" "$O/outputs" 0 0 > "$O/plain_enc.txt" 2>&1
for ((i = 0; i < K; i++)); do
  timeout 20 "$work/harness" "$DATA" "$O/outputs" "$i" $((i + 1)) > "$O/plain_$i.txt" 2>&1; echo "plain $i rc=$?"; done
timeout 60 "$work/harness" "$DATA" "$O/outputs" "$K" "$N" > "$O/plain_wg.txt" 2>&1; echo "plain wg rc=$?"
ncu --query-metrics --chip gh100 > "$work/query.txt" 2>&1
M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_[a-z_]*(shared|ldsm|stsm|ldgsts|gmma|tma|bulk|dsmem)[a-z_]*)\b" "$work/query.txt" | sort -u | sed 's/$/.sum/' | paste -sd,)
echo "$M" > "$O/metrics_used.txt"
TILES=$(python3 -c "import json;print(sum(1 for l in json.load(open('$DATA/launches.json'))['launches'] if l['id'].startswith('tma_tile')))")
RANGES="tiles:0:$TILES"
for ((i = TILES; i < K; i++)); do RANGES="$RANGES o$i:$i:$((i + 1))"; done
[ "${2:-}" = wgmma ] && RANGES="$RANGES wg1:$K:$((K + H)) wg2:$((K + H)):$((K + 2 * H)) wg3:$((K + 2 * H)):$N"
[ -n "${LAB_ONE_GROUP:-}" ] && RANGES="all:0:$K"  # every launch in one profiled run
for r in $RANGES; do IFS=: read n lo hi <<< "$r"
  timeout 150 ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no \
    -f -o "$O/rep_$n" "$work/harness" "$DATA" - "$lo" "$hi" > "$O/ncu_$n.txt" 2>&1
  ncu -i "$O/rep_$n.ncu-rep" --page raw --csv --print-units base > "$O/raw_$n.csv"
  ncu -i "$O/rep_$n.ncu-rep" --page source --csv --print-source sass > "$O/source_$n.csv"
  rm -f "$O/rep_$n.ncu-rep"; echo "prof $n done $(date +%T)"
done
echo "wrote $O"
