"""Whether a case whose timing moves between sweeps moves when timed alone; prints a table.

    python3 benchmarks/steady_timing.py [--measures 8] [OP:CASE ...]

On the H200 (session 38) some bench cases came out about 10-20% slower in one sweep than in
the others, at the SM clock's most (NVML) as their measurement started and ended, and with
their repetitions spread over 0.2 (p20-p80 over the median) in some sweeps and 0.00 in
others: two levels, as if a repetition ran in one of two states. This times the operators'
own solutions on each case's bench inputs in one quiet process, as a judge's turn does
(`kgb.evaluate.timing.measure` inside a kernel-clock session), `--measures` times under each
condition:

- rest: 0.3 s with the GPU idle before each measurement;
- back to back: one measurement right after the other;
- after load: 1 s of large GEMMs on two streams (clock_recovery.py's load) right before each,
  as a turn that drained busy work sections starts (clock_recovery.py: the power cap holds
  the clock down for about 100 ms after such a load);
- after load, no wait: the same without judge v20's rest while the power cap holds the
  clock down (`kgb.evaluate.nvml.wait_for_clocks`), as judges up to v19 measured.

Per case and condition: the medians' least, median and most, the share of repetitions over
1.05x the least median (the slow level), and the SM and memory clocks (NVML) around the
measurements. Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from clock_recovery import load  # noqa: E402  (beside this file)

from kgb import operators  # noqa: E402
from kgb.evaluate import kernel_clock, nvml  # noqa: E402
from kgb.evaluate.draws import draw_inputs  # noqa: E402
from kgb.evaluate.nvml import Clocks  # noqa: E402
from kgb.evaluate.timing import measure  # noqa: E402

# cases that moved 10-20% between the jobs of sessions 37-38 on the H200
MOVED = ("cublas::cublasCsymv_v2:bench-l", "cublas::cublasZgemmStridedBatched:bench-attention",
         "vllm::gptq_gemm:llama8b-gate-up-decode", "aten::poisson:bench-small-bf16", "aten::mm:square-8192-bf16")
SLOW = 1.05


def solution_call(op: str, case_name: str):
    """The operator's solution bound to the case's bench inputs (set T, the case's own seed)."""
    spec = operators.load(op)
    case = next((c for c in spec.cases if c.name == case_name), None)
    if case is None:
        raise SystemExit(f"{op} has no case {case_name}: {', '.join(c.name for c in spec.cases)}")
    entry = spec.entry_of(case)
    fn = getattr(spec.solution_module(), entry.name)
    args, kwargs = entry.bind(draw_inputs(spec, case, case.seed, "cuda"))
    return lambda: fn(*args, **kwargs)


def clocks_now(clocks: Clocks) -> tuple[int | None, int | None]:
    """The SM and memory clocks in MHz, or None where NVML does not say."""
    r = clocks.read()
    return (r.sm_mhz if r else None), clocks.memory_mhz()


def measured(call, clocks: Clocks, wait: bool) -> tuple[float, list[float], tuple, tuple]:
    """One measurement as a judge's turn takes it: its median, its repetitions and the clocks
    (SM, memory MHz) as it started and ended. Without `wait`, as judges before v20 took it."""
    before = clocks_now(clocks)
    waiting = nvml.wait_for_clocks
    if not wait:
        nvml.wait_for_clocks = lambda: 0.0
    try:
        with kernel_clock.session():
            t = measure(call, repeats=100)
    finally:
        nvml.wait_for_clocks = waiting
    after = clocks_now(clocks)
    samples = t.reading.samples() if t.reading is not None else None
    t = t.counted()
    return t.median_us, samples or [], before, after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", default=list(MOVED), help="OP:CASE (default: the cases that moved)")
    parser.add_argument("--measures", type=int, default=8)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA GPU here: this benchmark times on one", file=sys.stderr)
        return 2
    clocks = Clocks.of_cuda_device(0)
    # the load clock_recovery.py puts on the GPU: made once, not before every measurement
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    streams = [torch.cuda.Stream() for _ in range(2)]
    print(f"device: {torch.cuda.get_device_name(0)}; NVML: {'yes' if clocks.available else 'no'}")
    print("\n| case | condition | median us: least / median / most | repetitions over 1.05x the least | "
          "SM MHz before / after (median) | memory MHz before / after |")
    print("|---|---|---|---|---|---|")
    for name in args.cases:
        op, _, case = name.rpartition(":")
        call = solution_call(op, case)
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        rows = {}
        for condition in ("rest", "back to back", "after load", "after load, no wait"):
            runs = []
            for _ in range(args.measures):
                if condition == "rest":
                    time.sleep(0.3)
                elif condition.startswith("after load"):
                    load(1.0, big, streams)
                runs.append(measured(call, clocks, wait=not condition.endswith("no wait")))
            rows[condition] = runs
        least = min(m for runs in rows.values() for m, *_ in runs)
        for condition, runs in rows.items():
            medians = [m for m, *_ in runs]
            reps = [s for _, samples, *_ in runs for s in samples]
            slow = sum(s > SLOW * least for s in reps) / len(reps) if reps else float("nan")

            def mid(values):
                values = [v for v in values if v is not None]
                return f"{statistics.median(values):.0f}" if values else "-"

            print(f"| {name} | {condition} | {min(medians):.1f} / {statistics.median(medians):.1f} / {max(medians):.1f} | "
                  f"{100 * slow:.0f}% of {len(reps)} | {mid(b[0] for *_, b, _ in runs)} / {mid(a[0] for *_, a in runs)} | "
                  f"{mid(b[1] for *_, b, _ in runs)} / {mid(a[1] for *_, a in runs)} |", flush=True)
        # the slowest measurement's repetitions, in order, over the least median: how the two
        # levels fall in time (runs of one, then the other, or mixed)
        _, samples, *_ = max((r for runs in rows.values() for r in runs), key=lambda r: r[0])
        print(f"  slowest measurement's repetitions / {least:.1f} us: "
              + " ".join(f"{s / least:.2f}" for s in samples[:40]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
