"""How fast the judge gets through candidates on this machine; prints a table.

    python benchmarks/throughput.py [--source all] [--jobs N] [--cases smoke] [--ops a::b,...] [--views-alone]
                                    [--trace FILE] [--baselines-from SWEEP.json,...] [--slowest-first SWEEP.json]

Judges every selected operator's solution through `kgb.evaluate` with N evaluations in
flight (one warm engine; on a GPU, timing is exclusive per GPU and checks overlap) and
prints: the engine's start, the wall time of the whole sweep, evaluations per minute, the
time per candidate of the view operators (their kernels are trivial or absent, so their
evaluation time is harness overhead: fork, confinement, transfers, comparison), and where
the judges' time went, phase by phase (`Verdict.phase_s`). With --views-alone, the view
operators are then judged twice more one at a time, nothing else running: issue 11's harness
overhead of one candidate on a warm engine, as an agent calling the judge meets it on its first
call of an operator (the baselines timed) and on its later ones (the baselines known). With
--trace, the judges log their turns and work sections and the report says what each turn's
drain waited for (benchmarks/gpu_trace.py); with --baselines-from, the baselines an earlier
sweep measured are given as known, as a job's baseline book gives them on a chip's second run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb import chips, operators  # noqa: E402
from kgb.evaluate import (  # noqa: E402
    COMPILE_STORE,
    ENGINE,
    RAN_OUT_AMONG_OTHERS,
    EvalSettings,
    Verdict,
    evaluate,
)
from kgb.evaluate.bench_case import SENT_NOT_DRAWN  # noqa: E402
from kgb.evaluate.candidate_call import DRAWN, RECEIVING, SENDING  # noqa: E402
from kgb.evaluate.timing_lock import TRACE_ENV  # noqa: E402
from kgb.trial_order import longest_first  # noqa: E402

# Waiting at a section's end for its GPU work is the kernels' and the reference's time, not the harness's.
# The crossings of inputs and outputs are (issue 11: a candidate's time less its compile, kernel
# and reference time); until session 22 they were inside the phase "candidate" and not counted.
# Outside the judge, since session 31 in three: the compile store's copies, the engine's run of
# the judge less the judge's own time, and the rest of the harness's evaluate().
STORE = "outside the judge: the compile store"
HANDOFF = "outside the judge: the engine's hand-off (spare or fork, the judge's start and exit)"
OUTSIDE = "outside the judge: the harness, other"
HARNESS_PHASES = ("process start", "import", "spec", "memory release", "judge, other", "clock warm-up",
                  STORE, HANDOFF, OUTSIDE, SENDING, RECEIVING, DRAWN)
# Outside the judge of the verdict's run, named apart since session 24: at 16 in flight on the
# H200 "outside the judge" was 2412 s of the evaluations' 7558 s, against 219 s at 12.
GATE = "waiting for a place under the GPU memory gate"
RAN_OUT = "runs that ran out of GPU memory among others"
VIEW_OPS = ["aten::as_strided", "aten::expand", "aten::narrow", "aten::select", "aten::t", "aten::unsqueeze",
            "aten::reshape", "aten::expand_as", "aten::unsafe_split"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", default="all")
    parser.add_argument("--ops", default="")
    parser.add_argument("--jobs", type=int, default=None,
                        help="evaluations in flight (default: as many as `python run.py` runs on this host)")
    parser.add_argument("--cases", default=None, help="default: smoke on the CPU, all on a GPU")
    parser.add_argument("--json", default=None, help="also write each candidate's times and phases here")
    parser.add_argument("--start-until", type=float, default=None,
                        help="start no candidate this many seconds into the sweep (those running finish): "
                             "a sweep split over several GPU sessions, each with a time limit")
    parser.add_argument("--views-alone", action="store_true",
                        help="after the sweep, judge the view operators one at a time on the warm engine")
    parser.add_argument("--baselines-from", default="",
                        help="earlier sweeps' --json files, comma-separated: their baselines are given to the "
                             "judge as known, as a job's baseline book gives them on the chip's second run; "
                             "only those of the operator's current spec version (files written before session 30 "
                             "name none, and are taken as they are)")
    parser.add_argument("--slowest-first", default=None,
                        help="an earlier sweep's --json file: start the operators slowest first by its wall "
                             "times (those it lacks last), not by operators/judging_seconds.json as run.py does")
    parser.add_argument("--trace", default=None,
                        help="keep the judges' trace of turns and work sections here and report what the "
                             "turns waited for (benchmarks/gpu_trace.py)")
    args = parser.parse_args()
    if args.trace:  # before the engine starts: its judges inherit the environment
        os.environ[TRACE_ENV] = str(Path(args.trace).resolve())
    device = chips.local_device()
    if args.jobs is None:
        from kgb.run import trials_at_once

        args.jobs = trials_at_once(None, device)
    tags = tuple(args.cases.split(",")) if args.cases else (("smoke",) if device == "cpu" else ("smoke", "check", "bench"))
    named = [o for o in args.ops.split(",") if o]
    ops = operators.select(args.source, named or None)
    # in `python run.py`'s order (kgb.trial_order), unless named or told otherwise
    ops = sorted(ops, key=named.index) if named else longest_first(ops, device)
    if args.slowest_first:
        earlier = {op: entry["wall_s"] for op, entry in json.loads(Path(args.slowest_first).read_text()).items()}
        ops.sort(key=lambda op: -earlier.get(op, 0.0))
    # only the swept operators' versions, and only when asked: loading all 210 specs took 1.6 s here
    known = _baselines(args.baselines_from, {op: operators.load(op).version for op in ops}) if args.baselines_from else {}
    settings = EvalSettings(device=device, case_tags=tags, time_cases=("bench",) if device != "cpu" else (),
                            timeout_s=600)
    started = time.perf_counter()
    spec = operators.load("aten::t")
    evaluate(spec.solution_path.read_text(), spec, settings)  # starts the engine
    engine_s = time.perf_counter() - started
    sweep = time.perf_counter()
    times: dict[str, float] = {}
    phases: dict[str, float] = {}
    failed: list[str] = []
    per_op: dict[str, dict] = {}
    lock = threading.Lock()

    def judge(op: str) -> None:
        if args.start_until is not None and time.perf_counter() - sweep > args.start_until:
            return
        spec = operators.load(op)
        t0 = time.perf_counter()
        verdict = evaluate(spec.solution_path.read_text(), spec, settings, known.get(op))
        times[op] = time.perf_counter() - t0
        split = split_of(verdict, times[op])
        with lock:
            for name, seconds in split.items():
                phases[name] = phases.get(name, 0.0) + seconds
            per_op[op] = {"spec_version": spec.version,
                          "wall_s": times[op], "status": str(verdict.status), "message": verdict.message[:300],
                          **({} if verdict.correct else {"logs": verdict.logs[-4000:]}),
                          "phases": split,
                          "ran_out_among": _ran_out_among(verdict.logs),
                          "cases": {c.name: [c.latency_us, c.baseline_us, c.timing_mode] for c in verdict.cases
                                    if c.latency_us or c.baseline_us}}
            if args.json:  # as it goes: a sweep cut short still says what it measured
                Path(args.json).write_text(json.dumps(per_op, indent=1))
            print(f"  [{len(per_op):>3}/{len(ops)}] {op:<40} {verdict.status:<13} {times[op]:6.1f} s "
                  f"| {time.perf_counter() - sweep:6.1f} s in", file=sys.stderr, flush=True)
        if not verdict.correct:
            failed.append(f"{op}: {verdict.status}: {verdict.message[:200]}")

    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(judge, ops))
    wall = time.perf_counter() - sweep
    left = [op for op in ops if op not in times]
    if left:
        print(f"not started (--start-until): {','.join(left)}")
    ops = [op for op in ops if op in times]
    views = [times[op] for op in VIEW_OPS if op in times]
    # Issue 11's harness overhead: what a view operator's evaluation spends on neither its
    # inputs, nor its calls, nor the GPU's turns, nor waiting for them (processes, import,
    # the judge's own bookkeeping, the engine and the fork).
    harness = [harness_s(per_op[op]["phases"]) for op in VIEW_OPS if op in per_op]
    rows = [
        ("machine", f"{chips.device_name()} ({device}), cases {','.join(tags)}, {args.jobs} in flight"),
        ("engine start + first candidate", f"{engine_s:.1f} s"),
        ("operators judged", f"{len(ops)} ({len(failed)} not correct)"),
        ("sweep wall time", f"{wall:.1f} s ({wall + engine_s:.1f} s with the start)"),
        ("candidates per minute", f"{60 * len(ops) / wall:.1f}"),
        ("per candidate, median / max", f"{statistics.median(times.values()):.2f} / {max(times.values()):.2f} s"),
        ("run again after running out of GPU memory among others",
         f"{sum(bool(v['ran_out_among']) for v in per_op.values())} evaluations, "
         f"{sum(len(v['ran_out_among']) for v in per_op.values())} times"),
        ("bench cases whose inputs were sent to the candidate process, not drawn there",
         f"{sum(SENT_NOT_DRAWN in (c[2] or '') for v in per_op.values() for c in v['cases'].values())} of "
         f"{sum(1 for v in per_op.values() for c in v['cases'].values() if c[0] is not None)} timed"),
        ("view operators, median per candidate", f"{statistics.median(views):.2f} s" if views else "-"),
        ("view operators, harness overhead median / max",
         f"{statistics.median(harness):.2f} / {max(harness):.2f} s" if harness else "-"),
    ]
    print("| figure | value |\n|---|---|")
    for name, value in rows:
        print(f"| {name} | {value} |")
    judged = sum(times.values())
    print(f"\nwhere the judges' time went, summed over the {len(times)} candidates ({judged:.1f} s of evaluations):\n")
    print("| phase | seconds | share |\n|---|---|---|")
    for name, seconds in sorted(phases.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {seconds:.1f} | {100 * seconds / judged:.0f}% |")
    for line in failed:
        print(f"  not correct: {line}")
    if args.views_alone:
        views_alone(settings)
    if args.trace and Path(args.trace).exists():
        import gpu_trace

        print("\nwhat the timing turns waited for (the judges' trace):\n")
        print(gpu_trace.report(gpu_trace.read(Path(args.trace))))
    return 0


def _ran_out_among(logs: str) -> list[int]:
    """How many evaluations were in flight each time this one ran out of GPU memory among
    them and was run again (the note kgb.evaluate.evaluate leaves in its log)."""
    found = re.search(re.escape(RAN_OUT_AMONG_OTHERS) + r" \(([\d, ]+) in flight\)", logs)
    return [int(n) for n in found.group(1).split(",")] if found else []


def _baselines(paths: str, versions: dict[str, int]) -> dict[str, dict[str, float]]:
    """Per operator, the baseline of each bench case that earlier sweeps measured, where
    they judged the operator's current spec version: another version may time other work
    (paged attention's version 3 fixed each case's sequence lengths)."""
    known: dict[str, dict[str, float]] = {}
    for path in filter(None, paths.split(",")):
        for op, entry in json.loads(Path(path).read_text()).items():
            if entry.get("spec_version", versions.get(op)) != versions.get(op):
                continue
            for case, (_, baseline_us, _) in entry.get("cases", {}).items():
                if baseline_us:
                    known.setdefault(op, {})[case] = baseline_us
    return known


def split_of(verdict: Verdict, wall: float) -> dict[str, float]:
    """Where one evaluation's wall time went: the judge's phases, the judge's time in none of
    them, and the harness's steps around the judge."""
    store = verdict.harness_s.get(COMPILE_STORE, 0.0)
    engine = verdict.harness_s.get(ENGINE)
    handoff = max(engine - verdict.judge_s, 0.0) if engine is not None else 0.0
    return {**verdict.phase_s, "judge, other": verdict.judge_s - sum(verdict.phase_s.values()),
            GATE: verdict.gate_s, RAN_OUT: verdict.ran_out_s, STORE: store, HANDOFF: handoff,
            OUTSIDE: wall - verdict.judge_s - verdict.gate_s - verdict.ran_out_s - store - handoff}


def harness_s(split: dict[str, float]) -> float:
    """Issue 11's harness overhead of one evaluation, from its `split_of`."""
    return sum(split.get(p, 0.0) for p in HARNESS_PHASES)


def views_alone(settings: EvalSettings) -> None:
    """The view operators judged one after another on the warm engine: their harness
    overhead without eleven other judges beside them. Each is judged twice, as an agent
    calling the judge meets it: its first call times the baselines (after its candidate
    process is reaped, kgb.evaluate.bench_timing), a later call is given them, as the job's
    baseline book gives them (kgb.tracking.baselines)."""
    rows = []
    for op in VIEW_OPS:
        spec = operators.load(op)
        known: dict[str, float] | None = None
        for call in ("first", "later"):
            t0 = time.perf_counter()
            verdict = evaluate(spec.solution_path.read_text(), spec, settings, known)
            wall = time.perf_counter() - t0
            rows.append((op, call, verdict.status, wall, split_of(verdict, wall)))
            known = {c.name: c.baseline_us for c in verdict.cases if c.baseline_us}
    print("\nview operators judged alone, one at a time, a first call then a later one (seconds):\n")
    print("| operator | call | verdict | wall | harness overhead | " + " | ".join(HARNESS_PHASES) + " |")
    print("|---" * (5 + len(HARNESS_PHASES)) + "|")
    for op, call, status, wall, split in rows:
        print(f"| {op} | {call} | {status} | {wall:.2f} | {harness_s(split):.2f} | "
              + " | ".join(f"{split.get(p, 0.0):.2f}" for p in HARNESS_PHASES) + " |")
    for call, what in (("first", "first calls (baselines timed)"), ("later", "later calls (baselines known)")):
        splits = [split for _, c, *_, split in rows if c == call]
        overheads = [harness_s(split) for split in splits]
        print(f"\nharness overhead alone, {what}, median / max: "
              f"{statistics.median(overheads):.2f} / {max(overheads):.2f} s")
        others: dict[str, list[float]] = {}
        for split in splits:
            for name, seconds in split.items():
                others.setdefault(name, []).append(seconds)
        print("median per phase: " + ", ".join(f"{n} {statistics.median(v):.2f}" for n, v in
                                                 sorted(others.items(), key=lambda kv: -statistics.median(kv[1]))))


if __name__ == "__main__":
    sys.exit(main())
