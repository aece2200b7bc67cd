#!/bin/bash
# mbarrier_forms lab: runs the very cubin's three forms on a GPU (sm_90) and checks what each
# wrote against what the PTX ISA makes of it (and tests/test_trace_mbarrier_forms.py checks
# the trace against): out[0] = 40, out[1..32] = 39. From the repo root, on a GPU machine:
#   OUT=DIR bash tests/data/trace/mbarrier_forms/lab/run.sh   -> $OUT/mbarrier_forms.txt
# A form the GPU cannot finish (a wrong reading of the PTX ISA here) is stopped by the
# timeout and said so.
set -u
L=$(cd "$(dirname "$0")" && pwd); OUT=${OUT:-/tmp/mbarrier_forms_out}; mkdir -p "$OUT"
R="$OUT/mbarrier_forms.txt"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > "$R" 2>&1
nvcc -O2 -o "$OUT/harness" "$L/main.cu" -lcuda >> "$R" 2>&1 || { echo "build failed" >> "$R"; cat "$R"; exit 1; }
timeout 60 "$OUT/harness" "$L/../mbarrier_forms.sm_90a.cubin" >> "$R" 2>&1; echo "harness rc=$?" >> "$R"
python3 - "$R" >> "$R" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith('{"form"')]
ok = len(rows) == 3 and all(r["rc"] == 0 and r["out"] == [40] + [39] * 32 for r in rows)
print("as the trace: yes" if ok else "as the trace: NO")
PY
cat "$R"
