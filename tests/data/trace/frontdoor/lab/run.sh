#!/bin/bash
# issue 29's measurements on the H200: the project's own host program (host.cu: a tile copied
# with cp.async by the project's own header library, kernels/include/tile, in two layouts; a
# __constant__ table set with cudaMemcpyToSymbol; a Params struct dumped where it is launched),
# run once plainly and twice under Nsight Compute (the second run only to check that the
# counters repeat); everything in one tar, $OUT/${LAB_TAR:-frontdoor.tar.gz}.
set -u
here=$(cd "$(dirname "$0")" && pwd); O=$(mktemp -d); OUTDIR=${OUT:-$here/out}; mkdir -p "$OUTDIR"
mkdir -p "$O/run" "$O/ncu_run" "$O/ncu_run2" "$O/cubins"
{ nvidia-smi -L; nvcc --version | tail -2; ncu --version | tail -1; } > "$O/gpu.txt" 2>&1
echo "building host.cu"
nvcc -O3 -lineinfo -arch=sm_90a -std=c++17 -I"$here/../kernels/include" \
  -o "$O/app" "$here/../kernels/host.cu" > "$O/build.txt" 2>&1 || { cat "$O/build.txt"; exit 1; }
echo "running it plainly"
"$O/app" "$O/run" > "$O/app.txt" 2>&1; cat "$O/app.txt"
(cd "$O/cubins" && cuobjdump -xelf all "$O/app" > /dev/null 2>&1; ls)
ncu --query-metrics --chip gh100 > "$O/query.txt" 2>&1
M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_(shared|ldsm|stsm|ldgsts)[a-z_]*)\b" "$O/query.txt" | sort -u | sed 's/$/.sum/' | paste -sd,)
for n in "" 2; do
  echo "under ncu$n"
  ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -f \
    -o "$O/rep$n" "$O/app" "$O/ncu_run$n" > "$O/ncu_run$n.txt" 2>&1 || tail -20 "$O/ncu_run$n.txt"
  ncu -i "$O/rep$n.ncu-rep" --page raw --csv --print-units base > "$O/raw$n.csv"
  ncu -i "$O/rep$n.ncu-rep" --page source --csv --print-source sass > "$O/source$n.csv"
  rm -f "$O/rep$n.ncu-rep"
done
rm -f "$O/query.txt"
tar czf "$OUTDIR/${LAB_TAR:-frontdoor.tar.gz}" -C "$O" .
ls -la "$O" "$O/run" "$O/ncu_run" "$O/cubins"; wc -c "$O"/raw*.csv "$O"/source*.csv
