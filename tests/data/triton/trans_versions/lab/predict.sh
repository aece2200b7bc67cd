#!/bin/bash
# The trace's per-op figures for lab/run.sh's launches (parameters by position: the
# TTGIR of Triton 3.2-3.4 names none). From the repo root: bash .../lab/predict.sh [SHMEM]
set -u; H=$(cd "$(dirname "$0")" && pwd); D=$(dirname "$H"); C=$(dirname "$D")/called; S=${1:-shmem}
for e in "$D"/3.*/*/ ; do
  echo "== spec_copy $(basename "$(dirname "$e")")"
  $S trace "$e" --grid 4 --arg 2=4096 --arg 3=2 --arg 4=17 --no-tables --no-heatmap | sed -n '/^per op/,$p'
done
for e in "$C"/3.*/*/centred_rows.json; do
  echo "== centred_rows $(basename "$(dirname "$(dirname "$e")")")"
  $S trace "$e" --grid 2 --arg 2=1000 --arg 3=1024 --arg 4=0.5 --arg 5=true --no-tables --no-heatmap | sed -n '/^per op/,$p'
done
