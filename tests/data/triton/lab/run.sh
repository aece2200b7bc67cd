#!/bin/bash
# Measure every launch of tests/data/triton/launches.json on an NVIDIA GPU (sm_90) with Nsight
# Compute, from the cache entries' own cubins.
#   bash tests/data/triton/lab/run.sh OUTDIR      (needs nvcc, ncu, python3)
# Then, on any machine: python3 tests/data/triton/lab/parse_ncu.py OUTDIR tests/data/triton
set -u
here=$(cd "$(dirname "$0")" && pwd); DATA=$(dirname "$here"); O=$(realpath -m "${1:-out}")
mkdir -p "$O"; work=$(mktemp -d)
python3 "$here/gen_main.py" "$DATA" "$work/main.cu" || exit 1
nvidia-smi -L > "$O/gpu.txt"; nvcc --version | tail -2 >> "$O/gpu.txt"; ncu --version | tail -1 >> "$O/gpu.txt"
nvcc -O2 -o "$work/harness" "$work/main.cu" -lcuda || exit 1
"$work/harness" "$DATA" | tail -1 || exit 1
ncu --query-metrics --chip gh100 > "$work/query.txt" 2>&1
M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_(shared|ldsm|stsm|ldgsts)[a-z_]*)\b" "$work/query.txt" | sort -u | sed 's/$/.sum/' | paste -sd,)
ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -f -o "$O/rep" "$work/harness" "$DATA" > "$O/ncu_run.txt" 2>&1 || tail -20 "$O/ncu_run.txt"
ncu -i "$O/rep.ncu-rep" --page raw --csv --print-units base > "$O/raw.csv"
ncu -i "$O/rep.ncu-rep" --page source --csv --print-source sass > "$O/source.csv"
for k in softmax_rows matmul_tiles; do
  ncu -i "$O/rep.ncu-rep" --page source --csv --print-source sass -k "$k" > "$O/source_$k.csv" 2>&1
done
echo "wrote $O"
