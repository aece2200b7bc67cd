# On the GPU machine, from the repository root, OUT set: MODELS=models (default) or models2.
# Every workload compiled once (warm), then run once under Nsight Compute; $OUT/ind$MODELS.tar.gz
set -u
H=$(cd "$(dirname "$0")" && pwd)
W=/tmp/indlab${MODELS:-}; rm -rf $W; mkdir -p $W
export TORCHINDUCTOR_CACHE_DIR=$W/ind TRITON_CACHE_DIR=$W/cache PYTHONUNBUFFERED=1
{ nvidia-smi -L; ncu --version | tail -1; python3 -c 'import torch, triton; print(torch.__version__, triton.__version__)'; } > $W/gpu.txt 2>&1
cat $W/gpu.txt
ncu --query-metrics --chip gh100 > $W/query.txt 2>&1
M=$(grep -oE "^(l1tex__data_pipe_lsu_wavefronts_mem_shared[a-z_]*|l1tex__data_bank_conflicts[a-z_]*|smsp__(sass_)?inst_executed_op_(shared|ldsm|stsm|ldgsts)[a-z_]*)\b" $W/query.txt | sort -u | sed 's/$/.sum/' | paste -sd,)
echo "$M" > $W/metrics.txt
mkdir -p $W/ints; echo "warm $(date +%T)"
timeout ${WARM_S:-330} python3 $H/run.py $W/warm.json > $W/warm.log 2>&1; echo "warm rc=$? $(date +%T)"; grep -E "^(ok|FAILED|launches)" $W/warm.log
timeout ${NCU_S:-200} ncu --clock-control none --metrics "$M" --section SourceCounters --import-source no -k regex:triton_ -c ${NCU_COUNT:-400} -f -o $W/run1 env SAVE_INTS=$W/ints python3 $H/run.py $W/run1.json > $W/run1.log 2>&1; echo "run1 rc=$? $(date +%T)"; grep -E "^(ok|FAILED|launches)" $W/run1.log
ncu -i $W/run1.ncu-rep --page raw --csv --print-units base > $W/run1.raw.csv 2>> $W/run1.log
ncu -i $W/run1.ncu-rep --page source --csv --print-source sass > $W/run1.source.csv 2>> $W/run1.log
rm -f $W/*.ncu-rep $W/query.txt; find $W -name '*.so' -delete; rm -rf $W/ind/fxgraph $W/ind/aotautograd
(cd $W && tar czf $OUT/ind${MODELS:-}.tar.gz .) ; ls -la $OUT
