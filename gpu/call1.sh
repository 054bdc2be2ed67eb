#!/bin/bash
# session 24, call 1: the v8 clock's GPU tests, its first-session cost, the red team, the views alone
export XDG_CACHE_HOME=/root/kgb-state/cache TMPDIR=/root/kgb-state/tmp
mkdir -p $TMPDIR $XDG_CACHE_HOME
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
echo "== gpu tests"; T0=$SECONDS
timeout 150 python3 -m pytest -q -o addopts="" -p no:cacheprovider tests/test_timing_gpu.py tests/test_kernel_clock.py 2>&1 | tail -15
echo "   took $((SECONDS-T0)) s"
echo "== kernel clock"; T0=$SECONDS
timeout 120 python3 benchmarks/kernel_clock.py > $OUT/kernel-clock.log 2>&1; tail -25 $OUT/kernel-clock.log
echo "   took $((SECONDS-T0)) s"
echo "== context starts"; T0=$SECONDS
timeout 150 python3 benchmarks/context_starts.py --measures 30 --starters 0,1,4 2>&1 | tail -12
echo "   took $((SECONDS-T0)) s"
echo "== redteam"; T0=$SECONDS
timeout 150 python3 benchmarks/judge_gpu.py --parts redteam --out $OUT/redteam > $OUT/redteam.log 2>&1; tail -30 $OUT/redteam.log
echo "   took $((SECONDS-T0)) s"
echo "== views"; T0=$SECONDS
V=aten::as_strided,aten::expand,aten::narrow,aten::select,aten::t,aten::unsqueeze,aten::reshape,aten::expand_as,aten::unsafe_split
timeout 150 python3 benchmarks/throughput.py --ops $V --jobs 1 --views-alone --json $OUT/views.json > $OUT/views.log 2>&1; tail -40 $OUT/views.log
echo "   took $((SECONDS-T0)) s"
