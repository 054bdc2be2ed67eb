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
"""

from __future__ import annotations

import argparse
import multiprocessing
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


def judge(path: str, scale: float, split: bool, turn_s: float, queue, results) -> None:
    timing_lock.spin_up = lambda: None  # nothing to spin up: the turns only sleep
    while True:
        index = queue.get()
        if index is None:
            return
        phase = Phases()
        started = time.perf_counter()
        evaluation(TimingLock(path, phase), scale, split, index, turn_s)
        results.put((time.perf_counter() - started, phase.seconds))


def sweep(judges: int, evaluations: int, scale: float, split: bool, turn_s: float) -> dict:
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
    parser.add_argument("--turn-s", type=float, default=TURN_S, help="a timing turn's length")
    args = parser.parse_args()
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


if __name__ == "__main__":
    sys.exit(main())
