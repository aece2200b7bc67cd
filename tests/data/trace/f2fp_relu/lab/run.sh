#!/bin/bash
# f2fp_relu lab: runs the very cubin on a GPU (sm_90) over ../inputs/in.bin and keeps what it
# wrote. From the repo root, on a GPU machine:
#   OUT=DIR bash tests/data/trace/f2fp_relu/lab/run.sh   -> DIR/f2fp_relu.txt, DIR/out.bin
# then copy DIR/out.bin to tests/data/trace/f2fp_relu/outputs/out.bin:
# tests/test_trace_f2fp_relu.py compares the trace's words with it byte for byte.
set -u
L=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/f2fp_relu_out}; mkdir -p "$OUT"
R="$OUT/f2fp_relu.txt"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > "$R" 2>&1
nvcc -O2 -o "$OUT/harness" "$L/../../../lab_common/one_block_main.cu" -lcuda >> "$R" 2>&1 || { echo "build failed" >> "$R"; cat "$R"; exit 1; }
# f2fp_relu<<<1, 64>>>(in: 128 floats, out: 128 words)
"$OUT/harness" "$L/../f2fp_relu.sm_90a.cubin" _Z9f2fp_reluPKfPj 64 "$L/../inputs/in.bin" 512 "$OUT/out.bin" 512 >> "$R" 2>&1
echo "harness rc=$?" >> "$R"
cat "$R"
