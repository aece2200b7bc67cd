#!/bin/sh
# On a GPU machine, from the repository root: OUT=DIR sh tests/data/trace/empty_wgmma/lab/run.sh
# Launches the kernel with n = 0, 1 and 3 (one block of 128) under Nsight Compute: every
# gmma and shared-memory counter (ncu.csv) and the source page (source.csv), from which
# measured.json keeps the per-op counters and the empty wgmma's row.
set -x
L=$(cd "$(dirname "$0")" && pwd); mkdir -p "$OUT"; cd "$L" || exit 1
nvcc -O3 -lineinfo -gencode arch=compute_90a,code=sm_90a -o "$OUT/ewg" main.cu || exit 1
ncu --clock-control none --csv --metrics 'regex:.*(gmma|shared).*\.sum$' "$OUT/ewg" > "$OUT/ncu.csv"
ncu --clock-control none --set none --section SourceCounters -o "$OUT/src" "$OUT/ewg"
ncu -i "$OUT/src.ncu-rep" --page source --csv --print-source sass > "$OUT/source.csv"
