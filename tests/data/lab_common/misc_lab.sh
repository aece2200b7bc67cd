# The op_misc labs' run.sh (tests/data/trace/warpops, globalops, sregs, barriers, genatom,
# genatom2, barrules): each launch of the lab's launches.json (one CTA each) counted with its source
# counters, then again without (the repeat), the counters of misc_lab_metrics.txt. A lab's
# run.sh sources ncu_lab.sh and this, then calls:
#   misc_lab NAME SECONDS SOURCE CUBIN NVCC_ARGS...   -> $OUT/NAME.tar.gz
# (SOURCE and CUBIN relative to the lab's folder; the cubin is built again there and compared).
# A lab may set MISC_METRICS (a list of its own, fewer counters: fewer ncu passes) and
# MISC_REPEAT_CHUNK (launches a report in the repeat, 55 unless set) before the call.
misc_lab() {
  local name=$1 seconds=$2 source=$3 cubin=$4; shift 4
  GEN=$DATA/../hopper/lab/gen_main.py
  lab_start "$name" "$seconds"
  lab_harness
  lab_same_cubin "$DATA/$source" "$DATA/$cubin" "$@"
  el built
  lab_plain
  lab_query
  lab_known "${MISC_METRICS:-$DATA/../../lab_common/misc_lab_metrics.txt}"
  # pass 1: counters and SourceCounters, 28 launches a report; pass 2: the counters only
  lab_pass all 28 0 15 45 source
  lab_pass repeat "${MISC_REPEAT_CHUNK:-55}" 0 10 40
  lab_done
}
