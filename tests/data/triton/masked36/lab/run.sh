#!/bin/bash
# masked36 lab: each entry of ../cache (Triton 3.6, 4 warps, 128 elements) launched on one
# program by ../../trans_versions/lab/run_cubin.cu (x and out 1 MiB zeroed, n, the two null
# scratch pointers Triton 3.6 adds) with n = 40 (warps 2 and 3 masked off), 128 (none) and 0
# (all), each under Nsight Compute twice: the per-op shared counters (op_misc among them).
# From the repo root, on a GPU machine: bash tests/data/triton/masked36/lab/run.sh OUTDIR
# then: python3 tests/data/triton/masked36/lab/parse.py OUTDIR  (writes ../measured.json)
set -u; H=$(cd "$(dirname "$0")" && pwd); D=$(dirname "$H"); T=$(dirname "$D")/trans_versions/lab
O=$(realpath -m "${1:-out}"); mkdir -p "$O"; cd "$O"
nvidia-smi -L > gpu.txt; ncu --version | tail -1 >> gpu.txt
nvcc -O2 -o run_cubin "$T/run_cubin.cu" -lcuda || exit 1
M=$(printf '%s,' l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st,atom,misc}.sum \
  l1tex__data_pipe_lsu_wavefronts_mem_shared.sum smsp__inst_executed.sum)
for cubin in "$D"/cache/*/*.cubin; do
  name=$(basename "$cubin" .cubin)
  for n in 40 128 0; do
    for r in 1 2; do
      ncu --clock-control none --metrics "${M%,}" --csv --page raw \
        ./run_cubin "$cubin" "$name" 1 128 0 p p i:$n q q > "raw_${name}_n${n}_$r.csv" 2>&1
    done
  done
done
rm -f run_cubin; echo "wrote $O"
