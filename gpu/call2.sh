#!/bin/bash
# session 24, call 2: the sweep under the fixed v8 build, with the host's CPU and the GPU's memory sampled
export XDG_CACHE_HOME=/root/kgb-state/cache TMPDIR=/root/kgb-state/tmp
mkdir -p $TMPDIR $XDG_CACHE_HOME
nproc; free -g | head -2
nvidia-smi --query-gpu=memory.used,utilization.gpu,utilization.memory --format=csv,noheader,nounits -lms 500 > $OUT/gpu-memory.txt 2>&1 &
SMI=$!
vmstat -n 1 > $OUT/vmstat.txt 2>&1 &
VM=$!
T0=$SECONDS
timeout ${SWEEP_S:-560} python3 benchmarks/throughput.py --jobs ${JOBS:-12} --slowest-first docs/results/h200-s21-call3-sweep.json \
  --baselines-from docs/results/h200-s21-call1-sweep.json --json $OUT/sweep.json --trace $OUT/trace.jsonl > $OUT/sweep.log 2>&1
echo "rc=$? took $((SECONDS-T0)) s"
kill $SMI $VM
gzip -f $OUT/trace.jsonl
tail -60 $OUT/sweep.log
awk -F', ' '{ if ($1>m) m=$1; u+=$2; b+=$3; n++; if ($2>=90) h++ } END {print "peak MiB", m, "mean sm util", u/n, "mean mem util", b/n, "share >=90%", h/n, "samples", n}' $OUT/gpu-memory.txt
awk 'NR>2 {us+=$13; sy+=$14; id+=$15; wa+=$16; n++; if ($1>rmax) rmax=$1} END {print "vmstat mean us/sy/id/wa", us/n, sy/n, id/n, wa/n, "max runnable", rmax, "samples", n}' $OUT/vmstat.txt
