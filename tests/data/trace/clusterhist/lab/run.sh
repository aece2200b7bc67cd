#!/bin/bash
# The cluster DSMEM-atomics lab (issue 29): every launch of ../launches.json measured with
# Nsight Compute by the Hopper lab's harness and run.sh (../../hopper/lab), all in one
# profiled run. A minute. From the repo root:
#   OUT=... bash tests/data/trace/clusterhist/lab/run.sh      -> $OUT/clusterhist.tar.gz
# then here: tar xzf it; LAB_DATA=tests/data/trace/clusterhist python3
# tests/data/trace/hopper/lab/parse_ncu.py DIR writes measured.json and outputs/ here.
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd); OUT=${OUT:-/tmp/clusterhist_out}
mkdir -p "$OUT"; W=$(mktemp -d)
LAB_DATA="$DATA" LAB_ONE_GROUP=1 bash "$DATA/../hopper/lab/run.sh" "$W/clusterhist"
tar -C "$W" -czf "$OUT/clusterhist.tar.gz" clusterhist; ls -la "$OUT"
