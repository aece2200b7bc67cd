#!/bin/bash
# Partial-warp ideal wavefronts (issues 29/30), on the H200, from the repo root (a copy of main):
#   OUT=... bash tests/data/trace/ideal2/run.sh   -> $OUT/ideal2 (56 launches, well under a minute)
# Builds kernels/ip.cu (nvcc -cubin -lineinfo -O3 -arch=sm_90), runs launches.json with
# tests/data/trace/lab/run.sh (plain, then under ncu) and parses the counters
# (tests/data/trace/lab/parse_ncu.py): $OUT/ideal2/data holds launches.json, inputs/, the
# cubin, measured.json and outputs/, ip.sass the disassembly.
set -u
OUT=${OUT:?OUT must name the results folder}
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../../.." && pwd)
R="$OUT/ideal2"; D="$R/data"; mkdir -p "$D/kernels"
cp "$here/launches.json" "$here/make_launches.py" "$D/"; cp -r "$here/inputs" "$D/"
cp "$here/kernels/ip.cu" "$D/kernels/"
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o "$D/ip.sm_90.cubin" "$D/kernels/ip.cu" || exit 1
cuobjdump -sass "$D/ip.sm_90.cubin" > "$R/ip.sass" 2>&1
timeout 170 bash "$root/tests/data/trace/lab/run.sh" "$R/run" "$D" || echo "lab run.sh failed: $?"
python3 "$root/tests/data/trace/lab/parse_ncu.py" "$R/run" "$D" || echo "parse failed"
cp -r "$R/run/outputs" "$D/outputs" 2>/dev/null
rm -f "$R/run/rep.ncu-rep" "$R/run/query.txt"
gzip -f "$R/run/raw.csv" "$R/run/source.csv" 2>/dev/null
echo "wrote $R"
