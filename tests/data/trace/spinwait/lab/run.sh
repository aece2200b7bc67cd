#!/bin/bash
# The spin-wait kernels' lab (issue 29): every launch of ../launches.json (all kernels but
# sw_deadlock) run on the GPU with the Hopper lab's harness (../../hopper/lab/gen_main.py),
# twice, each launch's output and flags dumped (nothing counted: the spins' turns are timing).
# A few seconds. From the repo root:
#   OUT=... bash tests/data/trace/spinwait/lab/run.sh      -> $OUT/spinwait.tar.gz
# then, here: tar xzf it and copy spinwait/outputs/ to tests/data/trace/spinwait/outputs/.
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/spinwait_out}; mkdir -p "$OUT"
W=$(mktemp -d); R="$W/spinwait"; mkdir -p "$R/outputs" "$W/repeat"
export LAB_DATA="$DATA"
nvidia-smi -L > "$R/gpu.txt" 2>&1; nvcc --version | tail -2 >> "$R/gpu.txt"
python3 "$DATA/../hopper/lab/gen_main.py" "$W/main.cu" || exit 1
nvcc -O2 -o "$W/harness" "$W/main.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; exit 1; }
N=$(python3 -c "import json;print(len(json.load(open('$DATA/launches.json'))['launches']))")
timeout 60 "$W/harness" "$DATA" "$R/outputs" 0 "$N" > "$R/run.txt" 2>&1; echo "run rc=$? $(tail -1 "$R/run.txt")"
timeout 60 "$W/harness" "$DATA" "$W/repeat" 0 "$N" > "$R/repeat.txt" 2>&1; echo "repeat rc=$? $(tail -1 "$R/repeat.txt")"
for f in "$R"/outputs/*.bin; do cmp -s "$f" "$W/repeat/$(basename "$f")" || echo "$(basename "$f") differs"; done > "$R/compare.txt"
echo "compare: $(wc -l < "$R/compare.txt") differ"
cp "$R/gpu.txt" "$R/outputs/gpu.txt"
tar -C "$W" -czf "$OUT/spinwait.tar.gz" spinwait; ls -la "$OUT"
