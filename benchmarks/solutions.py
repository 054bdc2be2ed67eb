"""Check and time every operator's solution on this machine's GPU; print a table.

    python benchmarks/solutions.py [--source aten|vllm|cublas|all] [--ops a::b,c::d]
                                   [--jobs N] [--second-run] [--deadline-s S] [--out DIR]

Phase 1 judges every solution on all its cases (smoke, check, bench) without timing, N
evaluations at a time (compilation and input generation are CPU-bound). Phase 2 times
the bench cases of the correct ones against the baseline, one worker at a time so that
nothing else runs on the GPU; with --second-run each is timed again in a new worker
process, which gives the run-to-run spread of the same kernel. Phase 2 stops starting
new operators after --deadline-s seconds, and the table says which were not timed.
Both phases go through kgb.evaluate, exactly like any candidate; they share one Triton
cache per operator so phase 2 does not compile again. Results go to
DIR/solutions.json and a markdown table to DIR/solutions.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb import chips, operators  # noqa: E402
from kgb.evaluate import EvalSettings, evaluate  # noqa: E402
from kgb.evaluate.verdict import geomean  # noqa: E402
from kgb.tracking.events import to_json  # noqa: E402


def positive_geomean(values: list[float | None]) -> float | None:
    positive = [v for v in values if v and v > 0]
    return geomean(positive) if positive else None


def fmt(value: float | None, spec: str = ".1f") -> str:
    return "" if value is None else format(value, spec)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", default="all")
    parser.add_argument("--ops", default="")
    parser.add_argument("--second-run", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("outputs/benchmarks"))
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--cases", default="smoke,check,bench", help="phase-1 case tags")
    parser.add_argument("--jobs", type=int, default=1, help="phase-1 evaluations at a time")
    parser.add_argument("--deadline-s", type=float, default=float("inf"))
    args = parser.parse_args()
    device = chips.local_device()
    ops = operators.select(args.source, [o for o in args.ops.split(",") if o] or None)
    args.out.mkdir(parents=True, exist_ok=True)
    cache = Path(tempfile.mkdtemp(prefix="kgb-bench-cache-"))
    started = time.perf_counter()

    def settings(op: str, tags: tuple[str, ...], timed: bool) -> EvalSettings:
        env = {"TRITON_CACHE_DIR": str(cache / op.replace(":", "_"))}
        return EvalSettings(device=device, case_tags=tags, time_cases=("bench",) if timed else (),
                            timeout_s=args.timeout, extra_env=env)

    def check(op: str):
        spec = operators.load(op)
        return evaluate(spec.solution_path.read_text(), spec, settings(op, tuple(args.cases.split(",")), False))

    print(f"{len(ops)} operator(s) on {chips.device_name()}; phase 1: all cases, {args.jobs} at a time", flush=True)
    with ThreadPoolExecutor(args.jobs) as pool:
        checked = dict(zip(ops, pool.map(check, ops), strict=True))
    for op, v in checked.items():
        print(f"  {op}: {v.status} ({v.eval_s:.0f}s) {'' if v.correct else v.message[:300]}", flush=True)
    print(f"phase 1 done in {time.perf_counter() - started:.0f}s; phase 2: timing", flush=True)

    records, rows = [], []
    for i, op in enumerate(ops, 1):
        record = {"op": op, "check": to_json(checked[op]), "first": None, "second": None}
        records.append(record)
        if not checked[op].correct:
            continue
        if device == "cpu":
            record["not_timed"] = "no GPU"
            continue
        if time.perf_counter() - started > args.deadline_s:
            record["not_timed"] = "deadline reached"
            continue
        spec = operators.load(op)
        source = spec.solution_path.read_text()
        first = evaluate(source, spec, settings(op, ("bench",), True))
        second = evaluate(source, spec, settings(op, ("bench",), True)) if args.second_run and first.correct else None
        record["first"], record["second"] = to_json(first), to_json(second) if second else None
        print(f"  [{i}/{len(ops)}] {op}: timed {first.status} ({first.eval_s:.0f}s)", flush=True)
        again = {c.name: c for c in second.cases} if second else {}
        for c in first.cases:
            if c.latency_us is None:
                continue
            c2 = again.get(c.name)
            rerun = c2.latency_us if c2 else None
            diff = abs(rerun - c.latency_us) / c.latency_us * 100 if rerun else None
            rows.append((op, c.name, c.latency_us, c.baseline_us, c.baseline_us / c.latency_us, rerun, diff, c.timing_mode, first.baseline))
        (args.out / "solutions.json").write_text(json.dumps(records, indent=1))
    (args.out / "solutions.json").write_text(json.dumps(records, indent=1))
    correct = sum(r["check"]["status"] == "correct" for r in records)
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
        g = positive_geomean(per_op.get(r["op"], []))
        timing = r.get("not_timed", "") if g is None else fmt(g, ".2f")
        lines.append(f"| {r['op']} | {r['check']['status']} | {timing} |")
    overall = positive_geomean([positive_geomean(v) for v in per_op.values()])
    diffs = [d for *_, d, _, _ in rows if d is not None]
    lines += ["", f"Geomean speedup over operators: {fmt(overall, '.3f')}.",
              f"Run-to-run latency difference: median {fmt(sorted(diffs)[len(diffs) // 2] if diffs else None, '.2f')}%, max {fmt(max(diffs) if diffs else None, '.2f')}% over {len(diffs)} bench cases."]
    table = "\n".join(lines) + "\n"
    (args.out / "solutions.md").write_text(table)
    print(table)
    return 0 if correct == len(ops) else 1


if __name__ == "__main__":
    sys.exit(main())
