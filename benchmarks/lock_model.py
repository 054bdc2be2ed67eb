"""The GPU's timing lock (kgb.evaluate.timing_lock) under a sweep's load, modelled: judges
that only sleep, in and out of real work sections and timing turns; prints a table.

    python benchmarks/lock_model.py [--judges 12] [--evaluations 100] [--scale 0.25]

Each modelled evaluation spends the per-evaluation means of session 17's call 3 on the H200
(100 operators, 12 in flight, docs/results/h200-s17-call3-sweep.json), scaled by --scale:
host work outside any section (process start, compiles: 4.7 s), 18 checks (15 cases and 3
fresh re-checks; draw and reference 0.083 s, the candidate's call 0.15 s, the comparison
0.029 s, all of which run in work sections), and 2.6 timed cases (the candidate's own
clock 0.43 s in a section; a turn of 0.2 s; 0.1 s of the replay's own sections). The
phases of the real sweep include transfers done with the section let go of, so the section
lengths here are guesses within them. Two layouts of a check: one section for all three
steps (judge v6 until commit 303cc55), and a section per step (after it). Nothing here runs
on a GPU: the figures say what the lock's protocol does with these lengths, not what an
H200 does.

    python benchmarks/lock_model.py --profile s23 [--gather 0,0.5,1]

models session 23's call 6 instead (judge v8, 210 operators, 12 in flight,
docs/results/h200-s23-call6-*; per evaluation: 9.2 s of host work outside any section, 2.1
turns measuring 0.23 s each, and the work sections of SECTIONS_S23, each as long as an
exponential draw around its kind's mean, as heavy-tailed as the trace's), once per value of
`TimingLock.gather_s`: how long a turn asked for alone waits for another judge to ask.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb.evaluate import timing_lock  # noqa: E402
from kgb.evaluate.phases import Phases  # noqa: E402
from kgb.evaluate.timing_lock import TimingLock  # noqa: E402

HOST_S, CHECKS, TIMED = 4.7, 18, 2.6
DRAW_REF_S, CALL_S, COMPARE_S = 0.083, 0.15, 0.029
OWN_CLOCK_S, TURN_S, REPLAY_WORK_S = 0.43, 0.2, 0.1

# Session 23's call 6, per evaluation (the trace's work sections over its 210 evaluations):
# (what, sections, mean seconds); the check's before the timing's
CHECK_SECTIONS_S23 = (("draw", 19.5, 0.030), ("reference", 4.1, 0.12), ("candidate", 69.0, 0.060),
                      ("inputs to the candidate process", 89.0, 0.025), ("compare", 23.0, 0.057))
TIMING_SECTIONS_S23 = (("candidate timing", 26.0, 0.065), ("replay warm-up", 2.9, 0.35))
HOST_S23, TURNS_S23, MEASURE_S23 = 9.2, 2.08, 0.23


def _count(mean: float, rng: random.Random) -> int:
    return int(mean) + (1 if rng.random() < mean % 1 else 0)


def evaluation_s23(lock: TimingLock, scale: float, index: int, measure_s: float = MEASURE_S23) -> None:
    """One evaluation as session 23's sweep spent it: host work between the check's
    sections, then per turn the timing's sections and the turn."""
    rng = random.Random(index)
    checks = [m for _, n, m in CHECK_SECTIONS_S23 for _ in range(_count(n, rng))]
    rng.shuffle(checks)
    turns = max(1, _count(TURNS_S23, rng))
    gap = HOST_S23 * scale / (len(checks) + turns)
    for mean in checks:
        time.sleep(gap)
        with lock.work():
            time.sleep(rng.expovariate(1 / mean) * scale)
    for _ in range(turns):
        time.sleep(gap)
        for _, n, mean in TIMING_SECTIONS_S23:
            for _ in range(_count(n / turns, rng)):
                with lock.work():
                    time.sleep(rng.expovariate(1 / mean) * scale)
        with lock():
            time.sleep(measure_s * scale)


def evaluation(lock: TimingLock, scale: float, split: bool, index: int, turn_s: float) -> None:
    time.sleep(HOST_S * scale)
    for _ in range(CHECKS):
        steps = (DRAW_REF_S, CALL_S, COMPARE_S)
        for seconds in (steps if split else (sum(steps),)):
            with lock.work():
                time.sleep(seconds * scale)
    timed = int(TIMED) + (1 if index % 10 < 10 * (TIMED % 1) else 0)  # 2.6 on average
    for _ in range(timed):
        with lock.work():
            time.sleep(OWN_CLOCK_S * scale)
        with lock():
            time.sleep(turn_s * scale)
        with lock.work():
            time.sleep(REPLAY_WORK_S * scale)


def judge(path: str, scale: float, split: bool | float, turn_s: float, queue, results) -> None:
    """`split` is a check's layout (session 17's model) or, as a number, the turns' gather_s
    (session 23's)."""
    timing_lock.spin_up = lambda: None  # nothing to spin up: the turns only sleep
    while True:
        index = queue.get()
        if index is None:
            return
        phase = Phases()
        lock = TimingLock(path, phase)
        started = time.perf_counter()
        if isinstance(split, bool):
            evaluation(lock, scale, split, index, turn_s)
        else:
            lock.gather_s = split * scale
            evaluation_s23(lock, scale, index, turn_s)
        results.put((time.perf_counter() - started, phase.seconds))


def sweep(judges: int, evaluations: int, scale: float, split: bool | float, turn_s: float) -> dict:
    ctx = multiprocessing.get_context("fork")
    queue, results = ctx.Queue(), ctx.Queue()
    for i in range(evaluations):
        queue.put(i)
    for _ in range(judges):
        queue.put(None)
    with tempfile.TemporaryDirectory(prefix="kgb-lock-model-") as folder:
        path = str(Path(folder) / "gpu.lock")
        started = time.perf_counter()
        procs = [ctx.Process(target=judge, args=(path, scale, split, turn_s, queue, results)) for _ in range(judges)]
        for p in procs:
            p.start()
        done = [results.get() for _ in range(evaluations)]
        wall = time.perf_counter() - started
        for p in procs:
            p.join()
    waits: dict[str, float] = {}
    for _, seconds in done:
        for name, s in seconds.items():
            waits[name] = waits.get(name, 0.0) + s
    total = sum(s for s, _ in done)
    return {"wall": wall / scale, "per_minute": 60 * evaluations / (wall / scale), "total": total,
            "median": statistics.median(s for s, _ in done) / scale, "waits": waits}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--judges", type=int, default=12)
    parser.add_argument("--evaluations", type=int, default=100)
    parser.add_argument("--scale", type=float, default=0.25)
    parser.add_argument("--turn-s", type=float, help=f"a timing turn's measurement (default {TURN_S} s, "
                        f"with --profile s23 {MEASURE_S23} s)")
    parser.add_argument("--profile", choices=("s17", "s23"), default="s17")
    parser.add_argument("--gather", default="0,0.5,1", help="gather_s values to model (--profile s23)")
    args = parser.parse_args()
    if args.profile == "s23":
        args.turn_s = MEASURE_S23 if args.turn_s is None else args.turn_s
        return main_s23(args)
    args.turn_s = TURN_S if args.turn_s is None else args.turn_s
    kinds = (timing_lock.WAIT_FOR_TURN, timing_lock.WAIT_FOR_DRAIN, timing_lock.WAIT_FOR_SECTION)
    print(f"{args.judges} judges, {args.evaluations} evaluations, turns of {args.turn_s} s, durations x {args.scale} "
          "(figures unscaled)\n")
    print("| a check's sections | sweep s | per minute | waiting share | a turn behind turns | a turn for sections "
          "to end | a section behind turns |\n|---|---|---|---|---|---|---|")
    for split in (False, True):
        r = sweep(args.judges, args.evaluations, args.scale, split, args.turn_s)
        shares = [100 * r["waits"].get(k, 0.0) / r["total"] for k in kinds]
        print(f"| {'one per step' if split else 'one for all steps'} | {r['wall']:.0f} | {r['per_minute']:.1f} | "
              f"{sum(shares):.0f}% | " + " | ".join(f"{s:.0f}%" for s in shares) + " |", flush=True)
    return 0


def main_s23(args: argparse.Namespace) -> int:
    kinds = (timing_lock.WAIT_FOR_COMPANY, timing_lock.WAIT_FOR_TURN, timing_lock.WAIT_FOR_DRAIN,
             timing_lock.WAIT_FOR_SECTION)
    print(f"session 23's sweep modelled: {args.judges} judges, {args.evaluations} evaluations, turns measuring "
          f"{args.turn_s} s, durations x {args.scale} (figures unscaled)\n")
    print("| gather_s | sweep s | per minute | median evaluation s | a turn for others to ask | a turn behind turns "
          "| a turn for sections to end | a section behind turns |\n|---|---|---|---|---|---|---|---|")
    for gather in (float(g) for g in args.gather.split(",")):
        r = sweep(args.judges, args.evaluations, args.scale, gather, args.turn_s)
        cells = " | ".join(f"{r['waits'].get(k, 0.0) / args.scale:.0f} s" for k in kinds)
        print(f"| {gather:g} | {r['wall']:.0f} | {r['per_minute']:.1f} | {r['median']:.1f} | {cells} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
