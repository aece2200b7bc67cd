#!/bin/bash
# Measure every launch of tests/data/trace/launches.json on an NVIDIA GPU (sm_90) with Nsight
# Compute, from the cubins kept beside it (the very binaries `shmem trace` emulates).
#   bash tests/data/trace/lab/run.sh OUTDIR [DATA]   (needs nvcc, ncu, cuobjdump, c++filt, python3)
# DATA is the folder of launches.json and the cubins (default tests/data/trace).
# Then, on any machine: python3 tests/data/trace/lab/parse_ncu.py OUTDIR DATA
set -u
here=$(cd "$(dirname "$0")" && pwd); DATA=$(realpath "${2:-$(dirname "$here")}"); O=$(realpath -m "${1:-out}")
mkdir -p "$O/outputs"; work=$(mktemp -d)
python3 "$here/gen_main.py" "$DATA" "$(command -v cuobjdump)" "$work/main.cu" || exit 1
nvidia-smi -L > "$O/gpu.txt"; nvcc --version | tail -2 >> "$O/gpu.txt"; ncu --version | tail -1 >> "$O/gpu.txt"
nvcc -O2 -o "$work/harness" "$work/main.cu" -lcuda || exit 1
"$work/harness" "$DATA" "$O/outputs" | tail -1 || exit 1
ncu --query-metrics --chip gh100 > "$O/query.txt" 2>&1
M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_(shared|ldsm|stsm|ldgsts)[a-z_]*)\b" "$O/query.txt" | sort -u | sed 's/$/.sum/' | paste -sd,)
ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -f -o "$O/rep" "$work/harness" "$DATA" "$work" > "$O/ncu_run.txt" 2>&1 || tail -20 "$O/ncu_run.txt"
ncu -i "$O/rep.ncu-rep" --page raw --csv --print-units base > "$O/raw.csv"
ncu -i "$O/rep.ncu-rep" --page source --csv --print-source sass > "$O/source.csv"
echo "wrote $O"
