#!/bin/bash
# On the H200: tutorial-shaped Triton matmuls (mma.sync) by PyTorch's Triton (its own ptxas: ABI 7),
# twice under Nsight Compute. Everything into $OUT/tri2.tar.gz.
# (the steps: ../../../lab_common/tri_lab.sh)
set -u
H=$(cd "$(dirname "$0")" && pwd)
. "$H/../../../lab_common/tri_lab.sh"
rm -rf /tmp/tri2
tri_start /tmp/tri2
cd "$H"
for r in 1 2; do tri_run $r 120 regex:mm_tut; done
tri_pack tri2.tar.gz
