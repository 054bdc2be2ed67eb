"""Which of a job's timings came out slow, and what the GPU was doing meanwhile; prints a table.

    python benchmarks/slow_measurements.py TRACE.jsonl[.gz] EVENTS.jsonl[.gz] EARLIER.jsonl[.gz]...

On the H200 (session 37) about one timing in fifty over 10 us came out more than 5% above its
case's median over six jobs, often a whole ms-long measurement 15-25% slow, where the turn
held the GPU (no work section beside it) and the SM clock was at its most as it started.
This takes a job's judges' trace (KGB_GPU_TRACE) and its event log, and the event logs of
other jobs of the same operators: a replay whose case's latency is over SLOW times its median
over all the logs is slow. For the slow replays and the others, it counts what was beside
each measurement: another judge's memory release, a candidate process's end (its CUDA
context going; within EXIT_WINDOW_S after the kill), a process start; and the SM clock as it
started and ended (kgb.evaluate.nvml, where the trace has it).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gpu_trace import beside, read  # noqa: E402  (beside this file)

from kgb.tracking.log import read_events  # noqa: E402
from kgb.tracking.projections import judged  # noqa: E402

SLOW = 1.05
FLOOR_US = 10.0  # under this, a timing's few-tenths of a microsecond is not a slowdown to explain
EXIT_WINDOW_S = 0.5  # how long a process's CUDA context may take to go after its kill


def latencies(path: Path) -> dict[tuple[str, str], float]:
    return {(op, c.name): c.latency_us for op, v in judged(read_events(path)) for c in v.cases
            if c.tag == "bench" and c.latency_us is not None}


def replays_by_case(records: list[dict]) -> list[tuple[dict, str]]:
    """Each replay's measurement as (its record with `tag` the operator, its case). Since session
    53 a replay's record names its case (`tag` "op case"); in older traces only the baseline's
    did, measured next in the judge's turn."""
    out = []
    by_pid: dict[int, list[dict]] = {}
    for r in sorted((r for r in records if r["kind"] == "measure"), key=lambda r: r["began"]):
        by_pid.setdefault(r["pid"], []).append(r)
    for measures in by_pid.values():
        for replay, then in zip(measures, [*measures[1:], None], strict=True):
            if replay.get("who") != "replay":
                continue
            if " " in replay["tag"]:
                op, case = replay["tag"].split(" ", 1)
                out.append((replay | {"tag": op}, case))
            elif then is not None and then.get("who") == "baseline" and then["tag"].startswith(replay["tag"] + " "):
                out.append((replay, then["tag"][len(replay["tag"]) + 1:]))
    return out


def describe(ms: list[dict], kinds: dict[str, list[dict]]) -> dict[str, str]:
    """What was beside the measurements `ms`, of the trace's records by kind."""
    n = len(ms)

    def share(count: int) -> str:
        return f"{count} ({100 * count / n:.0f}%)" if n else "0"

    row = {
        "measurements": str(n),
        "beside a memory release": share(sum(bool(beside(m, kinds["release"])) for m in ms)),
        "beside a process's end": share(sum(bool(beside(m, kinds["exit"], EXIT_WINDOW_S)) for m in ms)),
        "beside a process start": share(sum(bool(beside(m, kinds["start"])) for m in ms)),
    }
    for when, key in (("started", "sm_mhz"), ("ended", "end_sm_mhz")):
        clocked = [m for m in ms if m.get(key)]
        row[f"SM clock as it {when}: median MHz, under 95% of most"] = (
            f"{statistics.median(m[key] for m in clocked):.0f}, "
            f"{sum(m[key] < 0.95 * m['max_sm_mhz'] for m in clocked)}" if clocked else "-")
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("events", type=Path)
    ap.add_argument("earlier", type=Path, nargs="+")
    args = ap.parse_args()
    records = read(args.trace)
    mine = latencies(args.events)
    every = [mine, *(latencies(p) for p in args.earlier)]
    slow, steady = [], []
    for replay, case in replays_by_case(records):
        key = (replay["tag"], case)
        seen = [run[key] for run in every if key in run]
        if key not in mine or len(seen) < 2 or statistics.median(seen) < FLOOR_US:
            continue
        (slow if mine[key] > SLOW * statistics.median(seen) else steady).append(replay)
    kinds = {k: [r for r in records if r["kind"] == k] for k in ("release", "exit", "start")}
    rows = {"slow": describe(slow, kinds), "the others": describe(steady, kinds)}
    print(f"| replays (over {SLOW:g}x their case's median over {len(every)} jobs) | slow | the others |")
    print("|---|---|---|")
    for name in rows["slow"]:
        print(f"| {name} | {rows['slow'][name]} | {rows['the others'][name]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
