#!/bin/bash
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
export XDG_CACHE_HOME=/root/kgb-state/cache TMPDIR=/root/kgb-state/tmp
mkdir -p $XDG_CACHE_HOME $TMPDIR
timeout 200 python3 -m pytest -q -o addopts="" -p no:cacheprovider tests/test_timing_gpu.py tests/test_kernel_clock.py tests/test_redraw.py 2>&1 | tail -15
VIEWS=aten::as_strided,aten::expand,aten::narrow,aten::select,aten::t,aten::unsqueeze,aten::reshape,aten::expand_as,aten::unsafe_split
timeout 300 python3 benchmarks/throughput.py --ops $VIEWS --jobs 1 --views-alone --json $OUT/views.json > $OUT/views.log 2>&1
echo "views rc=$?"
grep -v "^  \[" $OUT/views.log | tail -45
