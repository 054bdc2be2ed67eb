"""Whether a bench case's time depends on how many calls came before it; prints a table.

    python benchmarks/inplace_drift.py [--ops aten::div_,cublas::cublasStrsm_v2] [--calls 300] [--budget-s 1]

The judge calls a bench case hundreds of times on the same tensors (warm-up, estimates,
repetitions). An operator that writes its inputs (a spec's INOUT_ARGS) feeds each call the
last one's output, and values that run off toward infinity or zero can change the time:
the GPU divides such operands on a slow path. For every bench case of the in-place
operators (or of those named), this draws the case's inputs as the judge does, then times
the operator's reference solution (operators/<source>/<name>/solution.py) and its PyTorch
baseline: the median of calls 2-11, then `--calls` more calls (fewer where they would take
over `--budget-s`: the judge, too, calls a slow case fewer times), then the median of ten more.
A ratio far from 1 means the case's latency depends on the judge's number of calls; the
last column says where the written values went (their magnitudes as powers of two, and the
share that is not finite). On a GPU the solution is imported here, unsandboxed: run it on the
project's own solutions only. Without one, it runs the PyTorch reference on the CPU, whose
times say nothing about a GPU but whose values say whether a case runs off.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from kgb import operators  # noqa: E402
from kgb.evaluate.baseline import routine  # noqa: E402
from kgb.evaluate.correctness import tensors_in  # noqa: E402
from kgb.evaluate.draws import draw_inputs  # noqa: E402
from kgb.evaluate.timing_lock import spin_up  # noqa: E402

SAMPLES = 10


def _timed(call, inputs: dict, entry) -> float:
    """One call's time in microseconds, by events around it (on the CPU, the host's clock)."""
    args, kwargs = entry.bind(inputs)
    if not torch.cuda.is_available():
        started = time.perf_counter()
        call(*args, **kwargs)
        return 1e6 * (time.perf_counter() - started)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    call(*args, **kwargs)
    end.record()
    end.synchronize()
    return 1000 * start.elapsed_time(end)


def written_range(spec, inputs: dict) -> str:
    """Where the floating values the operator writes ended up: the largest and smallest
    nonzero magnitude as powers of two, and the share that is not finite."""
    written = [t.detach().abs().double().flatten() for name in spec.inout_args for t in tensors_in(inputs.get(name))
               if t.is_floating_point() or t.is_complex()]
    values = torch.cat(written) if written else None
    if values is None or values.numel() == 0:
        return "-"
    finite = values[torch.isfinite(values)]
    nonzero = finite[finite > 0]
    if nonzero.numel() == 0:
        return f"no finite nonzero value, {100 * (1 - finite.numel() / values.numel()):.1f}% not finite"
    return (f"2^{torch.log2(nonzero.min()).item():.0f}..2^{torch.log2(nonzero.max()).item():.0f}, "
            f"{100 * (1 - finite.numel() / values.numel()):.1f}% not finite")


def drift(spec, case, call, calls: int, budget_s: float, device: str) -> tuple[float, float, int, str]:
    """The median time of calls 2-11 and of the ten after up to `calls` more (as many as
    take `budget_s`), in microseconds, how many calls came between, and where the written
    values ended up (`written_range`)."""
    entry = spec.entry_of(case)
    inputs = draw_inputs(spec, case, case.seed, device)
    _timed(call, inputs, entry)  # the first call loads and compiles
    before = statistics.median(_timed(call, inputs, entry) for _ in range(SAMPLES))
    calls = max(1, min(calls, int(budget_s * 1e6 / before)))
    for _ in range(calls):
        args, kwargs = entry.bind(inputs)
        call(*args, **kwargs)
    after = statistics.median(_timed(call, inputs, entry) for _ in range(SAMPLES))
    return before, after, calls, written_range(spec, inputs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", default="", help="operators, comma-separated (default: every in-place one)")
    parser.add_argument("--calls", type=int, default=300, help="calls between the two medians, at most")
    parser.add_argument("--budget-s", type=float, default=1.0, help="... taking about this long at most")
    args = parser.parse_args()
    names = [o for o in args.ops.split(",") if o] or None
    specs = [operators.load(op) for op in operators.select("all", names)]
    if names is None:
        specs = [s for s in specs if s.inout_args]
    gpu = torch.cuda.is_available()
    device = "cuda" if gpu else "cpu"
    if gpu:
        spin_up(1.0)  # an idle GPU's clocks are low: the first case's first calls would read slow
    where = torch.cuda.get_device_name() if gpu else "the CPU (the baseline only; times are the host's)"
    print(f"{where}: a call's median time, before and after more calls on the same tensors, "
          f"and the written values after\n")
    print("| operator | case | who | calls 2-11 (us) | calls between | after (us) | ratio | written values |\n"
          "|---|---|---|---|---|---|---|---|")
    for spec in specs:
        solution = spec.solution_module() if gpu else None
        for case in (c for c in spec.cases if c.tag == "bench"):
            entry = spec.entry_of(case).name
            whose = [("solution", getattr(solution, entry))] if gpu else []
            for who, call in (*whose, ("baseline", routine(spec, entry, device)[1])):
                try:
                    before, after, calls, values = drift(spec, case, call, args.calls, args.budget_s, device)
                except Exception as exc:  # noqa: BLE001 - one case's failure is a row, not the end
                    print(f"| {spec.id} | {case.name} | {who} | failed: {str(exc)[:80]} | | | | |")
                    continue
                print(f"| {spec.id} | {case.name} | {who} | {before:.1f} | {calls} | {after:.1f} | "
                      f"{after / before:.2f} | {values} |", flush=True)
            if gpu:
                torch.cuda.empty_cache()

if __name__ == "__main__":
    main()
