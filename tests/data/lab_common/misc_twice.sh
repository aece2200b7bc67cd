#!/bin/sh
# The small op_misc labs' run (tests/data/trace/tidreads, fencemerge, attnorder, attnmid): the
# lab's own host program (LAB/lab/main.cu: it includes LAB/kernels.cu and launches each kernel
# in the order the lab's test lists) built with the flags of the lab's kept cubin
# (LAB/build.sh), the kernels' cubin built again beside it (build.txt says whether it is the
# kept one), and every launch counted twice by Nsight Compute: op_misc wavefronts and warp
# instructions executed (ncu1.csv, ncu2.csv). On a GPU machine, from the repository root:
#   OUT=DIR sh tests/data/lab_common/misc_twice.sh LAB NVCC_ARCH_FLAGS...
# then, here: python3 tests/data/lab_common/misc_twice_parse.py DIR > tests/data/trace/LAB/measured.json
set -x
D=$(cd "$(dirname "$0")/../trace/$1" && pwd) || exit 1
shift
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
cd "$D/lab" || exit 1
nvcc -O3 "$@" -o "$OUT/lab" main.cu || exit 1
nvcc -cubin -O3 "$@" -o "$OUT/kernels.cubin" ../kernels.cu || exit 1
for kept in ../*.cubin; do
  cmp -s "$OUT/kernels.cubin" "$kept" && echo "same cubin as $kept" || echo "cubin differs from $kept"
done > "$OUT/build.txt"
nvidia-smi -L > "$OUT/gpu.txt"
ncu --version > "$OUT/ncu_version.txt"
for r in 1 2; do
  ncu --clock-control none --csv \
    --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_misc.sum,smsp__inst_executed.sum \
    "$OUT/lab" > "$OUT/ncu$r.csv" 2> "$OUT/ncu$r.err"
done
