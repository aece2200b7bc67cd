#!/bin/bash
# On the H200 (or H100): our own mma.sync dot variants (kernels.py, launches.py) JIT-run by
# PyTorch's Triton 3.6 (its bundled ptxas: ELF ABI 7 cubins, as a PyTorch user's cache), every
# kernel compiled first without the profiler, then every launch under Nsight Compute twice
# (--clock-control none, the shared-memory counters, the SourceCounters section).
# Usage: bash tests/data/triton/mma36/lab/run.sh   ($OUT set: results into $OUT/mma36.tar.gz)
# (the steps: ../../../lab_common/tri_lab.sh)
set -u
H=$(cd "$(dirname "$0")" && pwd)
. "$H/../../../lab_common/tri_lab.sh"
rm -rf /tmp/mma36
echo "start $(date +%T)"
tri_start /tmp/mma36
echo "metrics $(echo "$M" | tr , '\n' | wc -l) $(date +%T)"
cd "$H"
tri_warm 4 60
for r in 1 2; do tri_run $r 75 'regex:^(mm_v|attn2)$'; done
tri_failed 40
tri_pack mma36.tar.gz; echo "end $(date +%T)"
