#!/bin/bash
# Warp reconvergence lab (issue 29): the launches of launches.txt (the shipped cubin, run
# through the driver API by harness.cu), each counted per SASS instruction by Nsight Compute's
# source page. From the repo root (or from a copy of this folder anywhere):
#   OUT=... bash tests/data/trace/converge/lab/run.sh      -> $OUT/converge.tar.gz
# About a minute. Then, here: python3 lab/compare.py RESULTS (the unpacked converge/ folder).
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd)
OUT=${OUT:-/tmp/converge_out}; mkdir -p "$OUT"
W=$(mktemp -d); R="$W/converge"; mkdir -p "$R/outputs" "$R/outputs_ncu"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/log.txt"; }
pack() { tar -C "$W" -czf "$OUT/converge.tar.gz" converge; }
CUBIN="$DATA/converge.sm_90a.cubin"
nvidia-smi -L > "$R/gpu.txt" 2>&1; nvidia-smi --query-gpu=driver_version --format=csv,noheader >> "$R/gpu.txt" 2>&1
nvcc --version | tail -2 >> "$R/gpu.txt"; ncu --version | tail -1 >> "$R/gpu.txt"
nvcc -O2 -o "$W/harness" "$L/harness.cu" -lcuda > "$R/build.txt" 2>&1 || { el "harness build failed"; cat "$R/build.txt"; pack; exit 1; }
# the cubin rebuilt by this machine's nvcc, only to say whether its SASS is the shipped one's
nvcc -cubin -lineinfo -O3 -gencode=arch=compute_90a,code=sm_90a -o "$W/rebuilt.cubin" "$DATA/kernels/converge.cu" >> "$R/build.txt" 2>&1
sass() { cuobjdump -sass "$1" | sed 's@/\* 0x[0-9a-f]* \*/@@' | grep -v '^\s*$'; }
if sass "$CUBIN" | cmp -s - <(sass "$W/rebuilt.cubin"); then echo same > "$R/rebuilt_sass.txt"; else echo differs > "$R/rebuilt_sass.txt"; fi
el "built; rebuilt SASS $(cat "$R/rebuilt_sass.txt")"
# plain runs, three times: what __activemask() each probe saw (do the runs agree?)
for i in 1 2 3; do
  timeout 30 "$W/harness" "$CUBIN" "$L/launches.txt" "$R/outputs" > "$R/plain_$i.txt" 2>&1; el "plain $i rc=$?"
done
pack
timeout 150 ncu --clock-control none --section SourceCounters --import-source no -f -o "$W/rep" \
  "$W/harness" "$CUBIN" "$L/launches.txt" "$R/outputs_ncu" > "$R/ncu.txt" 2>&1; el "ncu rc=$?"
ncu -i "$W/rep.ncu-rep" --page source --csv --print-source sass > "$R/source.csv" 2>> "$R/ncu.txt"
ncu -i "$W/rep.ncu-rep" --page raw --csv --print-units base > "$R/raw.csv" 2>> "$R/ncu.txt"
el "pages written"; pack; ls -la "$OUT"
