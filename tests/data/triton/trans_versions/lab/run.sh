#!/bin/bash
# Shared-memory wavefronts of this folder's spec_copy entries (Triton 3.2/3.3/3.4/3.6) and of
# ../called's centred_rows entries (3.3.1/3.4.0/3.6.0), each launched from its own cubin by
# run_cubin.cu (driver API) under Nsight Compute, twice. From the repo root, on a GPU machine:
#   bash tests/data/triton/trans_versions/lab/run.sh OUTDIR
# Each launch's figures are in OUTDIR/ncu_<entry>_<run>.csv; ./predict.sh gives the trace's.
set -u; H=$(cd "$(dirname "$0")" && pwd); D=$(dirname "$H"); C=$(dirname "$D")/called
O=$(realpath -m "${1:-out}"); mkdir -p "$O"; cd "$O"
nvidia-smi -L > gpu.txt; ncu --version | tail -1 >> gpu.txt
nvcc -O2 -o run_cubin "$H/run_cubin.cu" -lcuda || exit 1
M=l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
one() {  # NAME CUBIN KERNEL GRID THREADS SMEM PARAM...
  local name=$1; shift
  for r in 1 2; do ncu --clock-control none --metrics "$M" --csv ./run_cubin "$@" > "ncu_${name}_$r.csv" 2>&1; done
}
# spec_copy(src, dst, n=4096, s_out=2, off=17): grid 4, 4 warps; then Triton's scratch pointers
for v in 3.2.0 3.3.1 3.4.0 3.6.0; do
  cubin=$(ls "$D/$v"/*/spec_copy.cubin); smem=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['shared'])" "${cubin%.cubin}.json")
  case $v in 3.2.0) X="";; 3.6.0) X="q q";; *) X="q";; esac
  one "spec_copy_$v" "$cubin" spec_copy 4 128 "$smem" p p i:4096 i:2 i:17 $X
done
# centred_rows(out, in, n_cols=1000, row_stride=1024, scale=0.5, CENTRE=true): grid 2, 4 warps
for v in 3.3.1 3.4.0 3.6.0; do
  case $v in 3.6.0) X="q q";; *) X="q";; esac
  one "centred_rows_$v" "$(ls "$C/$v"/*/centred_rows.cubin)" centred_rows 2 128 16 p p i:1000 i:1024 f:0.5 b:1 $X
done
echo "wrote $O"
