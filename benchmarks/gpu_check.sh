#!/usr/bin/env bash
# kgb's check of a GPU host in one command: the GPU tests, then the README's main command as a
# newcomer meets it (a fresh tracking root and an empty compile store) and a chip's later job,
# with the judges' trace, and, given an earlier job's event log, how their timings agree.
#
# usage, from the repository root of a GPU host with kgb installed (docs/gpu.md):
#   benchmarks/gpu_check.sh [--no-tests] [--one-job] OUT [EARLIER_EVENTS.jsonl.gz]
# --no-tests skips the GPU tests and --one-job the later job, to fit a lent machine's minutes
# (the whole check takes about nine on an H200). e.g. benchmarks/gpu_check.sh /tmp/check docs/results/h200-s35-call3-first-events.jsonl.gz
#
# OUT receives ten files, a few MB in all: summary.txt (one line per step, its exit code
# and seconds), tests.log, first-run.md and first-run.json (benchmarks/first_run.py's tables,
# then benchmarks/host_profile.py's: the CPU time by role, the machine's idle each 5 s), host.json,
# first-events.jsonl.gz and second-events.jsonl.gz (the two jobs' event logs), trace.txt
# (benchmarks/gpu_trace.py on both jobs' traces, and benchmarks/slow_measurements.py on the
# first's), first-trace.jsonl.gz (the first job's trace itself, for questions the report does
# not answer) and agreement.txt (benchmarks/agreement.py of the first job against the earlier
# log, and against the second job). A step that fails is written down and the next one runs.
# (The `device` tool brings back eight files from a call: tar OUT into one.)
set -uo pipefail
tests=1
second=--second
while [ $# -gt 0 ]; do
  case $1 in
    --no-tests) tests=0; shift ;;
    --one-job) second=; shift ;;
    -*) echo "unknown option: $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ]; then
  echo "usage: benchmarks/gpu_check.sh [--no-tests] [--one-job] OUT [EARLIER_EVENTS.jsonl.gz]" >&2
  exit 2
fi
out=$1
earlier=${2:-}
if [ -n "$earlier" ] && [ ! -f "$earlier" ]; then
  echo "no such event log: $earlier" >&2
  exit 2
fi
if ! python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  echo "no CUDA GPU visible to torch here: this script checks a GPU host" >&2
  exit 2
fi
mkdir -p "$out"
: >"$out/summary.txt"
trace=$(mktemp -d)/trace.jsonl
began=$SECONDS
failed=0

step() {  # step NAME FILE COMMAND...: run it, its output added to FILE; its exit code and seconds to the summary
  local name=$1 file=$2 at=$SECONDS code
  shift 2
  "$@" >>"$file" 2>&1
  code=$?
  [ "$code" -eq 0 ] || failed=$((failed + 1))
  echo "$name rc=$code $((SECONDS - at)) s" | tee -a "$out/summary.txt"
}

# The tests that need a GPU (each skips on a CPU, so CI never runs them): the judge's waits and
# clock, alone, since they time calls (beside the red team's busy-between-calls attack, which
# keeps the GPU busy for seconds, a graph-timing test read a short call eagerly, session 41);
# then the red team's GPU and sandbox attacks, the audit of the replay's calls, the candidate
# process's own draws, float8 and chunked comparisons, and that the inputs and references made
# in fewer launches (the batched triangular draws, selective_scan's reference, session 68) are
# the same bits on the GPU as the one-at-a-time versions; eight at a time.
[ "$tests" -eq 0 ] || step tests-timing "$out/tests.log" python3 -m pytest -q -p no:cacheprovider -o addopts="" \
  tests/test_cuda_waits.py tests/test_timing_gpu.py -k "gpu or cuda"
[ "$tests" -eq 0 ] || step tests "$out/tests.log" python3 -m pytest -q -p no:cacheprovider -o addopts="-n 8 --dist loadgroup" \
  tests/test_redteam.py tests/test_redraw.py tests/test_staged_replay.py \
  tests/test_correctness.py tests/test_call_audit.py tests/test_cublas_triangle_draws.py \
  tests/test_vllm_references_b.py -k "gpu or cuda or sandbox or float8 or chunk"

# under the host's profile (benchmarks/host_profile.py, a sample a second): whether the host's
# cores bound the jobs, where the GPU is idle a sixth of an H100's first job (session 66)
step first_run "$out/first-run.md" env KGB_GPU_TRACE="$trace" python3 benchmarks/host_profile.py --every 1 \
  --json "$out/host.json" -- python3 benchmarks/first_run.py $second --events "$out" --json "$out/first-run.json" \
  -- chip=nvidia

# the first job's trace kept before any report on it: a caller's time limit that cuts a report
# short (session 65's call 3) loses the report, not the trace
[ -f "$trace.first" ] && gzip -c "$trace.first" >"$out/first-trace.jsonl.gz"

for run in first ${second:+second}; do
  echo "## the $run job's trace" >>"$out/trace.txt"
  step "trace-$run" "$out/trace.txt" python3 benchmarks/gpu_trace.py "$trace.$run"
done

# the first job's slow replays against the other jobs' timings, and what was beside them
others=()
[ -f "$out/second-events.jsonl.gz" ] && others+=("$out/second-events.jsonl.gz")
[ -n "$earlier" ] && others+=("$earlier")
if [ ${#others[@]} -gt 0 ]; then
  echo "## the first job's slow replays" >>"$out/trace.txt"
  step slow "$out/trace.txt" python3 benchmarks/slow_measurements.py "$trace.first" "$out/first-events.jsonl.gz" \
    "${others[@]}"
fi

if [ -f "$out/second-events.jsonl.gz" ]; then
  echo "## the first job against the second" >>"$out/agreement.txt"
  step agreement-second "$out/agreement.txt" python3 benchmarks/agreement.py "$out/first-events.jsonl.gz" \
    "$out/second-events.jsonl.gz"
fi
if [ -n "$earlier" ]; then
  echo "## the first job against $earlier" >>"$out/agreement.txt"
  step agreement-earlier "$out/agreement.txt" python3 benchmarks/agreement.py "$out/first-events.jsonl.gz" \
    "$earlier"
fi
echo "steps failed: $failed, $((SECONDS - began)) s in all" | tee -a "$out/summary.txt"
[ "$failed" -eq 0 ]
