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
A ratio far from 1 means the case's latency depends on the judge's number of calls. Needs a
GPU; the solution is imported here, unsandboxed: run it on the project's own solutions only.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from kgb import operators  # noqa: E402
from kgb.evaluate.draws import draw_inputs  # noqa: E402
from kgb.evaluate.timing_lock import spin_up  # noqa: E402

SAMPLES = 10


def _timed(call, inputs: dict, entry) -> float:
    """One call's time in microseconds, by events around it."""
    args, kwargs = entry.bind(inputs)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    call(*args, **kwargs)
    end.record()
    end.synchronize()
    return 1000 * start.elapsed_time(end)


def drift(spec, case, call, calls: int, budget_s: float) -> tuple[float, float, int]:
    """The median time of calls 2-11 and of the ten after up to `calls` more (as many as
    take `budget_s`), in microseconds, and how many calls came between."""
    entry = spec.entry_of(case)
    inputs = draw_inputs(spec, case, case.seed, "cuda")
    _timed(call, inputs, entry)  # the first call loads and compiles
    before = statistics.median(_timed(call, inputs, entry) for _ in range(SAMPLES))
    calls = max(1, min(calls, int(budget_s * 1e6 / before)))
    for _ in range(calls):
        args, kwargs = entry.bind(inputs)
        call(*args, **kwargs)
    after = statistics.median(_timed(call, inputs, entry) for _ in range(SAMPLES))
    return before, after, calls


def _baseline(spec, entry: str):
    """The judge's speed baseline: the library routine the spec names, or PyTorch's op."""
    hook = getattr(spec.module, "speed_baseline", None)
    found = hook(entry, "cuda") if hook is not None else None
    return found[1] if found is not None else spec.reference_for(entry)


def _solution(spec):
    loader = importlib.util.spec_from_file_location(f"solution_{spec.name}", spec.solution_path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return module


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
    spin_up(1.0)  # an idle GPU's clocks are low: the first case's first calls would read slow
    print(f"{torch.cuda.get_device_name()}: a call's median time, before and after more calls on the same tensors\n")
    print("| operator | case | who | calls 2-11 (us) | calls between | after (us) | ratio |\n|---|---|---|---|---|---|---|")
    for spec in specs:
        solution = _solution(spec)
        for case in (c for c in spec.cases if c.tag == "bench"):
            entry = spec.entry_of(case).name
            for who, call in (("solution", getattr(solution, entry)), ("baseline", _baseline(spec, entry))):
                try:
                    before, after, calls = drift(spec, case, call, args.calls, args.budget_s)
                except Exception as exc:  # noqa: BLE001 - one case's failure is a row, not the end
                    print(f"| {spec.id} | {case.name} | {who} | failed: {str(exc)[:80]} | | | |")
                    continue
                print(f"| {spec.id} | {case.name} | {who} | {before:.1f} | {calls} | {after:.1f} | "
                      f"{after / before:.2f} |", flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
