#!/bin/bash
# issue 29's measurements on the H200: the project's own host program (host.cu: a CuTe tile
# kernel in two layouts, a __constant__ table set with cudaMemcpyToSymbol, a Params struct dumped
# where it is launched), run once plainly and once under Nsight Compute; results in $OUT.
set -u
here=$(cd "$(dirname "$0")" && pwd); O=$(mktemp -d); OUTDIR=${OUT:-$here/out}; mkdir -p "$OUTDIR"
mkdir -p "$O/run" "$O/ncu_run" "$O/cubins"
{ nvidia-smi -L; nvcc --version | tail -2; ncu --version | tail -1; } > "$O/gpu.txt" 2>&1
nvcc -O3 -lineinfo -arch=sm_90a -std=c++17 --expt-relaxed-constexpr -I"${CUTLASS_INCLUDE:-$here/cutlass_include}" \
  -o "$O/app" "$here/../kernels/host.cu" > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
"$O/app" "$O/run" > "$O/app.txt" 2>&1; cat "$O/app.txt"
(cd "$O/cubins" && cuobjdump -xelf all "$O/app" > /dev/null 2>&1; ls)
ncu --query-metrics --chip gh100 > "$O/query.txt" 2>&1
M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_(shared|ldsm|stsm|ldgsts)[a-z_]*)\b" "$O/query.txt" | sort -u | sed 's/$/.sum/' | paste -sd,)
ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -f -o "$O/rep" \
  "$O/app" "$O/ncu_run" > "$O/ncu_run.txt" 2>&1 || tail -20 "$O/ncu_run.txt"
ncu -i "$O/rep.ncu-rep" --page raw --csv --print-units base > "$O/raw.csv"
ncu -i "$O/rep.ncu-rep" --page source --csv --print-source sass > "$O/source.csv"
rm -f "$O/query.txt" "$O/rep.ncu-rep"
tar czf "$OUTDIR/frontdoor.tgz" -C "$O" .
ls -la "$O" "$O/run" "$O/cubins"; wc -c "$O/raw.csv" "$O/source.csv"
