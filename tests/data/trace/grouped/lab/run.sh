#!/bin/bash
# grouped-kernel lab (issue 29): the project's grouped kernel (../grouped.cu, kept cubin
# ../grouped.sm_90.cubin) launched on the H200 by host.cu with real cudaMalloc'd problem and
# operand arrays, which dumps the parameter block and that device memory with its addresses;
# Nsight Compute counts the launch. From the repo root, on a GPU machine (about 1 minute):
#   OUT=... bash tests/data/trace/grouped/lab/run.sh          -> $OUT/grouped/
# $OUT/grouped/ncu/: the profiled run's dumps (params.bin, problems.bin, A*.bin, B*.bin,
# memory.txt: address file bytes; replay.txt: the shmem trace command, run in that folder),
# its report (rep.ncu-rep) and pages: raw.csv (per-launch counters), source.csv (per SASS
# instruction, for shmem trace --compare), details.csv. $OUT/grouped/csv/: the same launch
# profiled again with ncu --csv to stdout (its own dumps: the addresses differ run to run).
# $OUT/grouped/plain/: a run without the profiler (out.bin: what the kernel wrote).
set -u
L=$(cd "$(dirname "$0")" && pwd); DATA=$(cd "$L/.." && pwd)
OUT=${OUT:?OUT must name the results folder}; R="$OUT/grouped"; mkdir -p "$R/plain" "$R/ncu" "$R/csv"
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/log.txt"; }
W=$(mktemp -d)
{ nvidia-smi -L; nvcc --version | tail -2; ncu --version | tail -1; } > "$R/gpu.txt" 2>&1
nvcc -O2 -o "$W/host" "$L/host.cu" -lcuda > "$R/build.txt" 2>&1 || { cat "$R/build.txt"; exit 1; }
CUBIN="$DATA/grouped.sm_90.cubin"
# the kept cubin is what runs; a fresh compile of the source here, to see that it is the same
nvcc -cubin -lineinfo -O3 -arch=sm_90 -o "$W/rebuilt.cubin" "$DATA/grouped.cu" >> "$R/build.txt" 2>&1
cmp -s "$W/rebuilt.cubin" "$CUBIN" && echo "rebuilt cubin: identical" >> "$R/build.txt" \
  || echo "rebuilt cubin: differs (the kept one ran)" >> "$R/build.txt"
for d in plain ncu csv; do cp "$CUBIN" "$R/$d/"; done
el built
timeout 30 "$W/host" "$CUBIN" "$R/plain" > "$R/plain/run.txt" 2>&1; el "plain rc=$? $(tail -1 "$R/plain/run.txt")"
M=smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__sass_data_bytes_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
timeout 120 ncu --clock-control none --section SourceCounters --import-source no --metrics "$M" \
  -f -o "$W/rep" "$W/host" "$CUBIN" "$R/ncu" > "$R/ncu/ncu.txt" 2>&1; el "ncu rc=$?"
ncu -i "$W/rep.ncu-rep" --page raw --csv --print-units base > "$R/ncu/raw.csv" 2>> "$R/ncu/ncu.txt"
ncu -i "$W/rep.ncu-rep" --page source --csv --print-source sass > "$R/ncu/source.csv" 2>> "$R/ncu/ncu.txt"
ncu -i "$W/rep.ncu-rep" --page details --csv > "$R/ncu/details.csv" 2>> "$R/ncu/ncu.txt"
cp "$W/rep.ncu-rep" "$R/ncu/"
el exported
timeout 120 ncu --section SourceCounters --metrics "$M" --csv "$W/host" "$CUBIN" "$R/csv" \
  > "$R/csv/ncu.csv" 2> "$R/csv/ncu.err"; el "ncu --csv rc=$?"
tar -C "$OUT" -czf "$OUT/grouped.tar.gz" grouped
el "wrote $R and $OUT/grouped.tar.gz"; ls -la "$R" "$R/ncu"
