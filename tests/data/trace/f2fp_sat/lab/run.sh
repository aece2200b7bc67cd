#!/bin/bash
# f2fp_sat lab: runs the very cubin (../f2fp_sat.sm_90a.cubin) on a GPU (sm_90) over
# ../inputs/in.bin and keeps what it wrote. From the repo root, on a GPU machine:
#   bash tests/data/trace/f2fp_sat/lab/run.sh OUTDIR
#     -> OUTDIR/gpu.txt (the GPU, driver, nvcc; the harness's lines), OUTDIR/out.bin (5120 bytes),
#        OUTDIR/measured.json (the GPU's line, the cubin's sha256, out.bin in hex)
# then copy OUTDIR/measured.json to tests/data/trace/f2fp_sat/measured.json:
# tests/test_trace_f2fp_sat.py compares the trace's words with it byte for byte.
set -u
L=$(cd "$(dirname "$0")" && pwd); OUT=${1:?usage: run.sh OUTDIR}; mkdir -p "$OUT"
R="$OUT/gpu.txt"; CUBIN="$L/../f2fp_sat.sm_90a.cubin"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > "$R" 2>&1
nvcc -O2 -o "$OUT/harness" "$L/../../../lab_common/one_block_main.cu" -lcuda >> "$R" 2>&1 || { echo "build failed" >> "$R"; cat "$R"; exit 1; }
# f2fp_sat<<<1, 64>>>(in: 128 floats, out: 64 x 20 words)
"$OUT/harness" "$CUBIN" _Z8f2fp_satPKfPj 64 "$L/../inputs/in.bin" 512 "$OUT/out.bin" 5120 >> "$R" 2>&1
rc=$?; echo "harness rc=$rc" >> "$R"
[ $rc -eq 0 ] && python3 - "$R" "$CUBIN" "$OUT/out.bin" "$OUT/measured.json" <<'PY'
import hashlib, json, sys
gpu, cubin, out, dst = sys.argv[1:]
doc = {
    "gpu": " / ".join(open(gpu).read().splitlines()[:2]),
    "cubin_sha256": hashlib.sha256(open(cubin, "rb").read()).hexdigest(),
    "out_hex": open(out, "rb").read().hex(),
}
open(dst, "w").write(json.dumps(doc, indent=1) + "\n")
PY
cat "$R"
exit $rc
