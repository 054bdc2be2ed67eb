"""What the evaluation engine's start costs, step by step; prints a table.

    python benchmarks/engine_start.py [--rounds 3] [--device cuda]

Every sweep begins by starting the engine (kgb.evaluate.engine_process): a fresh Python that
imports torch, Triton and the judge before it forks any judge, so nothing is judged until it
is up. Each round starts one in a fresh Python, with the environment the harness gives it
(kgb.evaluate.environment.engine_env), and reports its steps (`engine_process._warm`) and the whole, from
the command to the process's exit (its "ready" comes after the steps; the exit adds torch's
teardown). The first round may read the files from disk; later ones from the
page cache.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb.evaluate import EvalSettings, engine_env  # noqa: E402

CHILD = """
import json, time
started = time.perf_counter()
from kgb.evaluate.engine_process import _warm
took = {"Python and kgb's first imports": time.perf_counter() - started}
_warm(took)
print(json.dumps(took))
"""


def one_start(env: dict[str, str]) -> dict[str, float]:
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    took = json.loads(out.stdout.strip().splitlines()[-1])
    took["the whole, from the command to its exit"] = time.perf_counter() - started
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = parser.parse_args()
    env = engine_env(EvalSettings(device=args.device))
    rounds = [one_start(env) for _ in range(args.rounds)]
    print(f"the engine's start, {args.rounds} rounds, device {args.device}\n")
    print("| step | first round (s) | median of the others (s) |\n|---|---|---|")
    for step in rounds[0]:
        others = [r[step] for r in rounds[1:]]
        print(f"| {step} | {rounds[0][step]:.2f} | {statistics.median(others):.2f} |" if others
              else f"| {step} | {rounds[0][step]:.2f} | - |")


if __name__ == "__main__":
    main()
