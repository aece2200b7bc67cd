#!/bin/bash
# On the H200: Triton 3.6 (PyTorch 2.11's) JIT runs of launches.py under Nsight Compute, once with
# Triton's bundled ptxas (ELF ABI 7) and once with CUDA 13's ptxas (ABI 8); a templated CUDA kernel
# for --compare. Everything into $OUT/lab.tgz. (the steps: ../../../lab_common/tri_lab.sh)
set -u
H=$(cd "$(dirname "$0")" && pwd)
. "$H/../../../lab_common/tri_lab.sh"
rm -rf /tmp/lab
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
tri_start /tmp/lab
nvcc --version | tail -2 >> "$W/gpu.txt"
K='regex:^(softmax_rows|layernorm_rows|transpose_tiles|matmul_tiles|matmul_grouped|matmul_host_desc|matmul_device_desc)$'
prof() {  # seconds, name, then the command
  local t=$1 n=$2; shift 2
  timeout $t ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -k "$K" -f -o $n "$@" > $n.log 2>&1; echo "$(basename $n) rc=$?" >> "$W/status.txt"
  ncu -i $n.ncu-rep --page raw --csv --print-units base > $n.raw.csv 2>>$n.log
  ncu -i $n.ncu-rep --page source --csv --print-source sass > $n.source.csv 2>>$n.log
}
cd "$H"
TRITON_CACHE_DIR=$W/cache7 prof 170 $W/abi7 python3 - $W/abi7.json < ../../../lab_common/tri_run.py
TRITON_CACHE_DIR=$W/cache8 TRITON_PTXAS_PATH=$(command -v ptxas) prof 110 $W/abi8 python3 - $W/abi8.json < ../../../lab_common/tri_run.py
cd $W
nvcc -O2 -lineinfo -arch=sm_90 -o templ $H/templ.cu > templ.log 2>&1 && cuobjdump -xelf all templ >> templ.log 2>&1
K='regex:transpose_tile'
prof 40 templ ./templ
ncu -i templ.ncu-rep --page source --csv --print-source sass --print-kernel-base mangled > templ.source_mangled.csv 2>>templ.log
rm -f *.ncu-rep.tmp; ls -la > listing.txt
tar czf $OUT/lab.tgz --exclude='*.ncu-rep' --exclude=query.txt . && cp status.txt $OUT/ 2>/dev/null
tar czf $OUT/reps.tgz *.ncu-rep 2>/dev/null
cat status.txt; du -sh $OUT/*
