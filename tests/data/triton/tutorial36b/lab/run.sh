#!/bin/bash
# On the H200: our own tutorial-kind Triton kernels (attention, layernorm backward with a lock,
# histograms, persistent matmuls, matmul variants) JIT-run by PyTorch's Triton 3.6 (its bundled
# ptxas: ABI 7), twice under Nsight Compute. Everything into $OUT/tri36more.tar.gz.
# (the steps: ../../../lab_common/tri_lab.sh)
set -u
H=$(cd "$(dirname "$0")" && pwd)
. "$H/../../../lab_common/tri_lab.sh"
rm -rf /tmp/tri36more
date +%T
tri_start /tmp/tri36more
cd "$H"
tri_warm 4 60
K='regex:^(attn_fwd|ln_bwd_dx|ln_bwd_dwdb|hist|hist_atomic|mm_persist_desc|mm_persist|mm_var)$'
for r in 1 2; do tri_run $r 75 "$K"; done
tri_failed 60
tri_pack tri36more.tar.gz; date +%T
