#!/bin/bash
# The clock-pace lab (issue 30): every launch of ../launches.json (lab/make_launches.py) run
# on the GPU with the Hopper lab's harness (../../hopper/lab/gen_main.py), three times, each
# launch's output dumped (counts and cycles read from clock64(): the GPU's pace, which the
# trace's clock model is held against). A few seconds. From the repo root:
#   OUT=... bash tests/data/trace/clockspin/lab/run.sh      -> $OUT/clockpace.tar.gz
# then, here: tar xzf it and copy clockpace/outputs/ to tests/data/trace/clockspin/outputs/.
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/clockpace_out}; mkdir -p "$OUT"
W=$(mktemp -d); R="$W/clockpace"; mkdir -p "$R/outputs"
export LAB_DATA="$DATA"
nvidia-smi -L > "$R/outputs/gpu.txt" 2>&1; nvcc --version | tail -2 >> "$R/outputs/gpu.txt"
python3 "$DATA/../hopper/lab/gen_main.py" "$W/main.cu" || exit 1
nvcc -O2 -o "$W/harness" "$W/main.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; exit 1; }
N=$(python3 -c "import json;print(len(json.load(open('$DATA/launches.json'))['launches']))")
for run in 1 2 3; do
  mkdir -p "$R/outputs/run$run"
  timeout 60 "$W/harness" "$DATA" "$R/outputs/run$run" 0 "$N" > "$R/run$run.txt" 2>&1
  echo "run $run rc=$? $(tail -1 "$R/run$run.txt")"
done
tar -C "$W" -czf "$OUT/clockpace.tar.gz" clockpace; ls -la "$OUT"
