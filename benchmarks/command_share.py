"""How much of the host's cores agents' busy commands leave to judging.

Judges and the harness run in the user's session; an agent's shell commands run in the
shell sandbox (kgb.agents.commands). This script keeps the host's cores busy with
"judges" (plain processes of this session, as a job's judges are) and measures how much
work they get done in a few seconds, first alone, then beside N agent commands that spin
on every core. It prints one row per N.

    python benchmarks/command_share.py [--seconds 4] [--commands 1 2 4 8]

The judges' share is their work beside the commands over their work alone (1.00: the
commands took nothing from them).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import threading
import time
from pathlib import Path

from kgb.agents.commands import run_command


def _spin(seconds: float, out: multiprocessing.Queue) -> None:
    count, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10_000):
            count += 1
    out.put(count)


def judges_work(seconds: float) -> int:
    """Loop iterations done by one spinning process per core in `seconds`."""
    out: multiprocessing.Queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=_spin, args=(seconds, out)) for _ in range(os.cpu_count() or 1)]
    for p in procs:
        p.start()
    total = sum(out.get() for _ in procs)
    for p in procs:
        p.join()
    return total


def busy_command(trial: Path, seconds: float) -> None:
    """An agent's command that spins on every core for `seconds`."""
    cores = os.cpu_count() or 1
    spin = f"end=$((SECONDS + {int(seconds) + 2})); while [ $SECONDS -lt $end ]; do :; done"
    command = " ".join(f"( {spin} ) &" for _ in range(cores)) + " wait"
    env = {"PATH": os.environ["PATH"], "HOME": str(trial / "home"), "TMPDIR": str(trial / "home")}
    run_command(command, trial / "workspace", env, timeout_s=seconds + 30, output_chars=2000, confine_to=trial)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--commands", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args()
    alone = judges_work(args.seconds)
    print(f"{os.cpu_count()} cores, {args.seconds:g} s per measurement; judges alone: {alone:,} iterations")
    print(f"{'agent commands':>14}  {'busy processes':>14}  {'judges share':>12}")
    for n in args.commands:
        with tempfile.TemporaryDirectory() as tmp:
            trials = []
            for i in range(n):
                trial = Path(tmp) / f"trial-{i}"
                for d in ("workspace", "home"):
                    (trial / d).mkdir(parents=True)
                trials.append(trial)
            threads = [threading.Thread(target=busy_command, args=(t, args.seconds)) for t in trials]
            for t in threads:
                t.start()
            time.sleep(1.0)  # the commands started and spinning
            beside = judges_work(args.seconds)
            for t in threads:
                t.join()
        print(f"{n:>14}  {n * (os.cpu_count() or 1):>14}  {beside / alone:>12.2f}")


if __name__ == "__main__":
    main()
