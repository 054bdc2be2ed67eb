#!/bin/bash
cd "$(dirname "$0")/.."
export XDG_CACHE_HOME=/root/kgb-state/cache TMPDIR=/root/kgb-state/tmp
mkdir -p $XDG_CACHE_HOME $TMPDIR
(while true; do nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader; sleep 2; done) > $OUT/gpu.txt 2>&1 &
SMI=$!
vmstat 2 > $OUT/vmstat.txt 2>&1 &
VM=$!
timeout ${SWEEP_S:-560} python3 benchmarks/throughput.py --jobs 16 --slowest-first docs/results/h200-s21-call3-sweep.json \
  --baselines-from docs/results/h200-s21-call1-sweep.json --json $OUT/sweep.json --trace $OUT/trace.jsonl > $OUT/sweep.log 2>&1
echo "sweep rc=$?"
kill $SMI $VM
gzip -f $OUT/gpu.txt $OUT/vmstat.txt $OUT/trace.jsonl
grep -v "^  \[" $OUT/sweep.log | head -80
