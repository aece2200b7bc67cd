# What the Triton labs' run.sh share (tests/data/triton/*/lab/run.sh; each sources it:
# . "$H/../../../lab_common/tri_lab.sh", and runs the steps from its own lab folder, where
# its kernels.py and launches.py are): the versions, the shared-memory counters this ncu
# knows, every launch run first without the profiler, then under Nsight Compute with its
# pages. Launches run through tri_run.py here (python3 - OUT.json < tri_run.py). Bash and
# the GPU machine's tools only; run by hand there.

# tri_start W: the results folder W (made), gpu.txt (the GPU, ncu, PyTorch and Triton), and
# M, the shared-memory counters this ncu knows (metrics.txt)
tri_start() {
  W=$1; mkdir -p "$W"
  export PYTHONUNBUFFERED=1
  { nvidia-smi -L; ncu --version | tail -1; python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)'; } > "$W/gpu.txt" 2>&1
  cat "$W/gpu.txt"
  ncu --query-metrics --chip gh100 > "$W/query.txt" 2>&1
  M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_(shared|ldsm|stsm|ldgsts)[a-z_]*)\b" "$W/query.txt" | sort -u | sed 's/$/.sum/' | paste -sd,)
  echo "$M" > "$W/metrics.txt"
}

# tri_launches: what tri_run.py runs, a launch a line (its id and kernel), into $W/list.txt
tri_launches() { TRI_LIST=1 python3 - x < ../../../lab_common/tri_run.py > "$W/list.txt"; }

# tri_warm PARTS SECONDS: every launch run once without the profiler, PARTS processes at once,
# into the Triton cache the runs under ncu use (warmP.json, warmP.log)
tri_warm() {
  local p
  for ((p = 0; p < $1; p++)); do
    TRITON_CACHE_DIR=$W/cache TRI_PART=$p/$1 timeout "$2" python3 - "$W/warm$p.json" < ../../../lab_common/tri_run.py > "$W/warm$p.log" 2>&1 &
  done
  wait; echo "warm $(date +%T) $(cat "$W"/warm?.log | grep -c '^[a-z].* [0-9a-f]\{64\}$') launches, $(cat "$W"/warm?.log | grep -c FAILED) failed"
}

# tri_run R SECONDS KERNELS: every launch under Nsight Compute (--clock-control none, the
# counters M, the SourceCounters section) for the kernels ncu's -k KERNELS names:
# runR.json, runR.log, runR.raw.csv and runR.source.csv
tri_run() {
  local r=$1 rc
  TRITON_CACHE_DIR=$W/cache timeout "$2" ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -k "$3" -f -o "$W/run$r" python3 - "$W/run$r.json" < ../../../lab_common/tri_run.py > "$W/run$r.log" 2>&1; rc=$?
  echo "run$r rc=$rc $(date +%T) $(grep -c '^[a-z].* [0-9a-f]\{64\}$' "$W/run$r.log") launches, $(grep -c FAILED "$W/run$r.log") failed"
  ncu -i "$W/run$r.ncu-rep" --page raw --csv --print-units base > "$W/run$r.raw.csv" 2>> "$W/run$r.log"
  ncu -i "$W/run$r.ncu-rep" --page source --csv --print-source sass > "$W/run$r.source.csv" 2>> "$W/run$r.log"
}

# tri_failed LINES: what the launches that failed while warming said (their last LINES lines)
tri_failed() { cat "$W"/warm?.log | grep -B12 FAILED | head -"$1"; }

# tri_clean: the reports, the counters' list and the compiled modules dropped from W
tri_clean() {
  rm -f "$W"/*.ncu-rep "$W/query.txt"
  [ ! -d "$W/cache" ] || find "$W/cache" -name '*.so' -delete
}

# tri_pack ARCHIVE: W, cleaned, archived as $OUT/ARCHIVE
tri_pack() { tri_clean; (cd "$W" && tar czf "$OUT/$1" .) && ls -la "$OUT"; }
