#!/bin/sh
# On a GPU machine, from the repository root: OUT=DIR sh tests/data/trace/cpguard/lab/run.sh
# Launches the kept cubin with tiles = 0, 1, 2 and 4 (one block of 128) under Nsight Compute:
# every shared-memory and LDGSTS counter of each launch (ncu.csv) and the source page
# (source.csv). cp.async's wavefronts are l1tex__data_pipe_lsu_wavefronts_mem_shared.sum less
# its op_ld, op_st, op_atom, op_misc, op_gmma and op_ipa parts (docs/hardware-model.md, 9a).
set -x
L=$(cd "$(dirname "$0")" && pwd); mkdir -p "$OUT"; cd "$L" || exit 1
nvcc -O2 -o "$OUT/cpguard" main.cu -lcuda || exit 1
"$OUT/cpguard" ../cpguard.sm_90.cubin || exit 1
ncu --clock-control none --csv --metrics 'regex:.*(shared|ldgsts).*\.sum$' "$OUT/cpguard" ../cpguard.sm_90.cubin > "$OUT/ncu.csv"
ncu --clock-control none --set none --section SourceCounters -o "$OUT/src" "$OUT/cpguard" ../cpguard.sm_90.cubin
ncu -i "$OUT/src.ncu-rep" --page source --csv --print-source sass > "$OUT/source.csv"
