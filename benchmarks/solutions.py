"""Check and time every operator's solution on this machine's GPU; print a table.

    python benchmarks/solutions.py [--source aten|vllm|cublas|all] [--ops a::b,c::d]
                                   [--second-run] [--out DIR]

Each solution is judged by the evaluator on all its cases (smoke, check, bench), timing
the bench cases against the baseline. With --second-run the bench cases are timed again
in a new worker process, which gives the run-to-run spread of the same kernel. Results
go to DIR/solutions.json and a markdown table to DIR/solutions.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb import chips, operators  # noqa: E402
from kgb.evaluate import EvalSettings, evaluate  # noqa: E402
from kgb.tracking.events import to_json  # noqa: E402


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def fmt(value: float | None, spec: str = ".1f") -> str:
    return "" if value is None else format(value, spec)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", default="all")
    parser.add_argument("--ops", default="")
    parser.add_argument("--second-run", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("outputs/benchmarks"))
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    device = chips.local_device()
    ops = operators.select(args.source, [o for o in args.ops.split(",") if o] or None)
    full = EvalSettings(device=device, case_tags=("smoke", "check", "bench"), time_cases=("bench",), timeout_s=args.timeout)
    bench_only = dataclasses.replace(full, case_tags=("bench",))
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"{len(ops)} operator(s) on {chips.device_name()}", flush=True)
    records, rows = [], []
    for i, op in enumerate(ops, 1):
        spec = operators.load(op)
        source = spec.solution_path.read_text()
        t0 = time.perf_counter()
        first = evaluate(source, spec, full)
        second = evaluate(source, spec, bench_only) if args.second_run and first.correct else None
        again = {c.name: c for c in second.cases} if second else {}
        print(f"[{i}/{len(ops)}] {op}: {first.status} ({time.perf_counter() - t0:.0f}s) {'' if first.correct else first.message[:300]}", flush=True)
        records.append({"op": op, "first": to_json(first), "second": to_json(second) if second else None})
        for c in first.cases:
            if c.latency_us is None:
                continue
            c2 = again.get(c.name)
            rerun = c2.latency_us if c2 else None
            diff = abs(rerun - c.latency_us) / c.latency_us * 100 if rerun else None
            rows.append((op, c.name, c.latency_us, c.baseline_us, c.baseline_us / c.latency_us, rerun, diff, c.timing_mode, first.baseline))
        (args.out / "solutions.json").write_text(json.dumps(records, indent=1))
    correct = sum(r["first"]["status"] == "correct" for r in records)
    lines = [
        f"Device: {chips.device_name()}. Correct on all cases: {correct}/{len(ops)}.",
        "",
        "| operator | bench case | latency_us | baseline_us | baseline | speedup | 2nd run latency_us | run-to-run diff % | timing |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for op, case, lat, base, speed, rerun, diff, mode, baseline in rows:
        lines.append(f"| {op} | {case} | {lat:.1f} | {base:.1f} | {baseline} | {speed:.2f} | {fmt(rerun)} | {fmt(diff, '.2f')} | {mode} |")
    lines += ["", "| operator | status | geomean speedup over bench cases |", "|---|---|---|"]
    per_op = {}
    for op, _, _, _, speed, *_ in rows:
        per_op.setdefault(op, []).append(speed)
    for r in records:
        g = geomean(per_op.get(r["op"], []))
        lines.append(f"| {r['op']} | {r['first']['status']} | {fmt(g, '.2f')} |")
    overall = geomean([geomean(v) for v in per_op.values()])
    diffs = [d for *_, d, _, _ in rows if d is not None]
    lines += ["", f"Geomean speedup over operators: {fmt(overall, '.3f')}.",
              f"Run-to-run latency difference: median {fmt(sorted(diffs)[len(diffs) // 2] if diffs else None, '.2f')}%, max {fmt(max(diffs) if diffs else None, '.2f')}% over {len(diffs)} bench cases."]
    table = "\n".join(lines) + "\n"
    (args.out / "solutions.md").write_text(table)
    print(table)
    return 0 if correct == len(ops) else 1


if __name__ == "__main__":
    sys.exit(main())
