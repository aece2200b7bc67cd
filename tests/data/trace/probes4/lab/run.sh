#!/bin/bash
# Probe lab 4 on an H100/H200 (sm_90), from the repo root (about half a minute):
#   OUT=... bash tests/data/trace/probes4/lab/run.sh      -> $OUT/probes4.tar.gz
# Both launches of ../launches.json with the Hopper lab's harness (../../hopper/lab/gen_main.py)
# into probes4/outputs, then again into repeat/ and the two compared (compare.txt: empty where
# every buffer agreed); the kernel rebuilt there and compared with the shipped cubin, whose
# conversions are listed (sass.txt). No profiler. Then here:
#   tar -C /tmp/p4 -xzf FILES/probes4.tar.gz && cp /tmp/p4/probes4/outputs/*.bin \
#     tests/data/trace/probes4/outputs/ && cp /tmp/p4/probes4/gpu.txt tests/data/trace/probes4/
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/probes4_out}
W=$(mktemp -d); R="$W/probes4"; mkdir -p "$R/outputs" "$W/repeat" "$OUT"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/log.txt"; }
pack() { tar -C "$W" -czf "$OUT/probes4.tar.gz" probes4; }
export LAB_DATA="$DATA"
nvidia-smi -L > "$R/gpu.txt" 2>&1; nvidia-smi --query-gpu=driver_version --format=csv,noheader >> "$R/gpu.txt" 2>&1
nvcc --version | tail -2 >> "$R/gpu.txt"
python3 "$DATA/../hopper/lab/gen_main.py" "$W/main.cu" > /dev/null || { el "gen_main failed"; pack; exit 1; }
nvcc -O2 -o "$W/harness" "$W/main.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; pack; exit 1; }
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o "$W/here.cubin" "$DATA/kernels/probes4.cu" >> "$R/build.txt" 2>&1
cmp -s "$W/here.cubin" "$DATA/probes4.sm_90.cubin" && echo "same cubin" >> "$R/build.txt" || echo "cubin differs here" >> "$R/build.txt"
cuobjdump -sass "$DATA/probes4.sm_90.cubin" 2>&1 | grep -E "Function|F2F" > "$R/sass.txt"
el built
timeout 30 "$W/harness" "$DATA" "$R/outputs" > "$R/outputs.txt" 2>&1; el "first run rc=$? $(tail -1 "$R/outputs.txt")"
timeout 30 "$W/harness" "$DATA" "$W/repeat" > "$W/repeat.txt" 2>&1; el "repeat rc=$? $(tail -1 "$W/repeat.txt")"
: > "$R/compare.txt"
for f in "$R"/outputs/*.bin; do
  b=$(basename "$f")
  if [ ! -f "$W/repeat/$b" ]; then echo "$b: no repeat" >> "$R/compare.txt"
  elif ! cmp -s "$f" "$W/repeat/$b"; then echo "$b: differs" >> "$R/compare.txt"; fi
done
el "compared $(ls "$R"/outputs/*.bin 2>/dev/null | wc -l) buffers: $(wc -l < "$R/compare.txt") differ or lack a repeat"
pack; el "wrote $OUT/probes4.tar.gz"
