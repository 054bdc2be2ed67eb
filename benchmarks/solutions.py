"""Check and time every operator's solution on this machine's GPU; print a table.

    python benchmarks/solutions.py [--source aten|vllm|cublas|all] [--ops a::b,c::d]
                                   [--jobs N] [--gpus G] [--second-run] [--deadline-s S]
                                   [--out DIR] [--cache DIR]

Phase 1 judges every solution on all its cases (smoke, check, bench) without timing, N
evaluations at a time (compilation and input generation are CPU-bound). Phase 2 times
the bench cases of the correct ones against the baseline, one worker at a time per GPU so
that nothing else runs on the GPU being timed (with --gpus G, G operators are timed at
once, each on its own GPU); with --second-run each is timed again in a new worker
process, which gives the run-to-run spread of the same kernel. Phase 2 stops starting
new operators after --deadline-s seconds, and the table says which were not timed.
Both phases go through kgb.evaluate, exactly like any candidate; they share one Triton
cache per operator (under --cache) so phase 2 does not compile again.

Results go to DIR/solutions.json, rewritten after every step, and a markdown table to
DIR/solutions.md. Run again with the same --out and the work already recorded there is
kept: only operators not yet checked are checked and only those not yet timed are
timed, so a sweep longer than one session's command limit is done in several calls.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb import chips, operators  # noqa: E402
from kgb.evaluate import EvalSettings, evaluate  # noqa: E402
from kgb.evaluate.verdict import geomean  # noqa: E402
from kgb.tracking.encoding import to_json  # noqa: E402


def positive_geomean(values: list[float | None]) -> float | None:
    positive = [v for v in values if v and v > 0]
    return geomean(positive) if positive else None


def fmt(value: float | None, spec: str = ".1f") -> str:
    return "" if value is None else format(value, spec)


def timed_rows(record: dict) -> list[tuple]:
    """(case, latency, baseline latency, speedup, 2nd-run latency, diff %, mode) per timed bench case."""
    first, second = record.get("first"), record.get("second")
    if not first:
        return []
    again = {c["name"]: c["latency_us"] for c in (second or {}).get("cases", [])}
    rows = []
    for c in first["cases"]:
        lat, base = c["latency_us"], c["baseline_us"]
        if lat is None or base is None:
            continue
        rerun = again.get(c["name"])
        diff = abs(rerun - lat) / lat * 100 if rerun else None
        rows.append((c["name"], lat, base, base / lat, rerun, diff, c["timing_mode"]))
    return rows


def table(records: list[dict], device_name: str) -> str:
    correct = sum(r["check"]["status"] == "correct" for r in records)
    lines = [
        f"Device: {device_name}. Correct on all cases: {correct}/{len(records)}.",
        "",
        "| operator | bench case | latency_us | baseline_us | baseline | speedup | 2nd run latency_us | run-to-run diff % | timing |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    per_op, diffs, total, total_base = {}, [], 0.0, 0.0
    for r in records:
        for case, lat, base, speed, rerun, diff, mode in timed_rows(r):
            lines.append(f"| {r['op']} | {case} | {lat:.1f} | {base:.1f} | {r['first']['baseline']} | "
                         f"{speed:.2f} | {fmt(rerun)} | {fmt(diff, '.2f')} | {mode} |")
            per_op.setdefault(r["op"], []).append(speed)
            total, total_base = total + lat, total_base + base
            if diff is not None:
                diffs.append(diff)
    lines += ["", "| operator | status | geomean speedup over bench cases |", "|---|---|---|"]
    for r in records:
        g = positive_geomean(per_op.get(r["op"], []))
        timing = r.get("not_timed", "") if g is None else fmt(g, ".2f")
        lines.append(f"| {r['op']} | {r['check']['status']} | {timing} |")
    overall = positive_geomean([positive_geomean(v) for v in per_op.values()])
    faster = sum(positive_geomean(v) > 1 for v in per_op.values())
    lines += ["", f"Timed operators: {len(per_op)}; faster than the baseline: {faster}.",
              f"Geomean speedup over operators: {fmt(overall, '.3f')}.",
              f"Sum of bench-case latencies: {total / 1000:.1f} ms (baseline {total_base / 1000:.1f} ms)."]
    if diffs:
        diffs.sort()
        lines.append(f"Run-to-run latency difference: median {diffs[len(diffs) // 2]:.2f}%, "
                     f"max {diffs[-1]:.2f}% over {len(diffs)} bench cases.")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", default="all")
    parser.add_argument("--ops", default="")
    parser.add_argument("--second-run", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("outputs/benchmarks"))
    parser.add_argument("--cache", type=Path, default=None, help="Triton caches (default: OUT/triton-cache)")
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--cases", default="smoke,check,bench", help="phase-1 case tags")
    parser.add_argument("--jobs", type=int, default=1, help="phase-1 evaluations at a time")
    parser.add_argument("--gpus", type=int, default=1, help="GPUs to spread over; phase 2 times on each alone")
    parser.add_argument("--deadline-s", type=float, default=float("inf"))
    parser.add_argument("--check-only", action="store_true", help="phase 1 only: judge, time nothing")
    args = parser.parse_args()
    device = chips.local_device()
    ops = operators.select(args.source, [o for o in args.ops.split(",") if o] or None)
    args.out.mkdir(parents=True, exist_ok=True)
    cache = args.cache or args.out / "triton-cache"
    results = args.out / "solutions.json"
    done = {r["op"]: r for r in json.loads(results.read_text())} if results.exists() else {}
    records = {op: done.get(op) for op in ops}
    started = time.perf_counter()
    saving = threading.Lock()

    def save() -> None:
        with saving:  # threads save as they finish, so a killed sweep keeps its work
            kept = {**done, **{op: r for op, r in records.items() if r}}
            results.write_text(json.dumps(list(kept.values()), indent=1))

    def settings(op: str, gpu: int, tags: tuple[str, ...], timed: bool) -> EvalSettings:
        env = {"TRITON_CACHE_DIR": str((cache / op.replace(":", "_")).resolve())}
        if args.gpus > 1:
            env["CUDA_VISIBLE_DEVICES"] = str(gpu)
            # Each worker gets its share of the host's cores: a neighbour drawing bench
            # inputs on every core slows this worker's Python between launches, which eager
            # timing counts whenever the GPU waits (the suspected cause of the two-GPU
            # spread in docs/gpu-results.md).
            env["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 2) // args.gpus))
        return EvalSettings(device=device, case_tags=tags, time_cases=("bench",) if timed else (),
                            timeout_s=args.timeout, extra_env=env)

    def check(i_op: tuple[int, str]) -> None:
        i, op = i_op
        spec = operators.load(op)
        tags = tuple(args.cases.split(","))
        v = evaluate(spec.solution_path.read_text(), spec, settings(op, i % args.gpus, tags, False))
        records[op] = {"op": op, "check": to_json(v), "first": None, "second": None}
        print(f"  {op}: {v.status} ({v.eval_s:.0f}s) {'' if v.correct else v.message[:300]}", flush=True)
        save()

    todo = [op for op in ops if records[op] is None]
    print(f"{len(ops)} operator(s) on {args.gpus} x {chips.device_name()}; phase 1: all cases of "
          f"{len(todo)} not yet checked, {args.jobs} at a time", flush=True)
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(check, enumerate(todo)))
    save()
    print(f"phase 1 done in {time.perf_counter() - started:.0f}s; phase 2: timing", flush=True)

    queue = [op for op in ops if records[op]["check"]["status"] == "correct" and not records[op].get("first")
             and not args.check_only]
    taking = threading.Lock()

    def time_on(gpu: int) -> None:
        """Times operators from the shared queue, one at a time, on GPU `gpu` alone."""
        while True:
            with taking:
                if not queue:
                    return
                op = queue.pop(0)
            record = records[op]
            if device == "cpu":
                record["not_timed"] = "no GPU"
                continue
            if time.perf_counter() - started > args.deadline_s:
                record["not_timed"] = "deadline reached"
                continue
            record.pop("not_timed", None)
            spec = operators.load(op)
            source = spec.solution_path.read_text()
            first = evaluate(source, spec, settings(op, gpu, ("bench",), True))
            second = (evaluate(source, spec, settings(op, gpu, ("bench",), True))
                      if args.second_run and first.correct else None)
            record["first"], record["second"] = to_json(first), to_json(second) if second else None
            if not first.correct:  # a bench case that failed only when timed counts against the solution
                record["check"] = to_json(first)
            print(f"  [{len(queue)} left] {op}: timed {first.status} on GPU {gpu} ({first.eval_s:.0f}s)", flush=True)
            save()

    with ThreadPoolExecutor(args.gpus) as pool:
        list(pool.map(time_on, range(args.gpus)))
    save()
    ordered = [records[op] for op in ops]
    text = table(ordered, f"{args.gpus} x {chips.device_name()}")
    (args.out / "solutions.md").write_text(text)
    print(text)
    return 0 if all(r["check"]["status"] == "correct" for r in ordered) else 1


if __name__ == "__main__":
    sys.exit(main())
