"""The README's main command as a newcomer meets it, timed and taken apart; prints a table.

    python benchmarks/first_run.py [--json F] [--warm] [-- run.py overrides, e.g. chip=nvidia 'ops=[aten::t]']

Runs `python run.py` into a fresh tracking root (so every baseline of the chip is measured,
as on a new machine) with an empty compile store and temp folder unless --warm, samples the
GPUs' memory each second where `nvidia-smi` answers, and reads the job's event log back:
how long from the launch to `RunStarted`, to the first trial and to the end; how many
evaluations ran out of GPU memory among others and ran again, and what that cost; what the
judges waited for. Issue 11's first goal is this command on one H200 in three minutes.

Until session 34 every H200 figure for that goal came from benchmarks/throughput.py, which
is given the chip's baselines and an order by earlier sweeps; and the GPU memory peaks of
sessions 31-33 were `nvidia-smi` lines compared as text ("99887 MiB" after "142373 MiB").
Here memory is read as numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PHASES_SHOWN = 8


class MemorySampler:
    """The GPUs' used memory in MiB each second, summed over the GPUs, while it runs."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> MemorySampler:
        if shutil.which("nvidia-smi"):
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, check=False).stdout
            used = parse_mib(out)
            if used is not None:
                self.samples.append(used)


def parse_mib(text: str) -> int | None:
    """`nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits`, one line a GPU, as
    the MiB they use together: numbers, never the lines compared as text."""
    values = [int(line.strip()) for line in text.splitlines() if line.strip().isdigit()]
    return sum(values) if values else None


def summarise(events: list[dict], launched: float) -> dict[str, float | int | None]:
    """The figures of one job's event log (its JSON lines); times from `launched` (time.time())."""
    def first(kind: str) -> float | None:
        return next((e["ts"] - launched for e in events if e["kind"] == kind), None)

    verdicts = [e["verdict"] for e in events if e["kind"] == "CandidateEvaluated"]
    ended = [e["ts"] - launched for e in events if e["kind"] == "TrialFinished"]
    return {
        "launch to RunStarted (s)": first("RunStarted"),
        "launch to the first trial (s)": first("TrialStarted"),
        "launch to the last trial's end (s)": max(ended) if ended else None,
        "trials": len(ended),
        "correct": sum(v["status"] == "correct" for v in verdicts),
        "baselines measured": sum(e["kind"] == "BaselineMeasured" for e in events),
        "evaluations summed (s)": sum(v.get("eval_s", 0.0) for v in verdicts),
        "evaluations run again after running out of GPU memory": sum(v.get("ran_out_s", 0.0) > 0 for v in verdicts),
        "... their first runs (s)": sum(v.get("ran_out_s", 0.0) for v in verdicts),
        "waits at the memory gate (s)": sum(v.get("gate_s", 0.0) for v in verdicts),
        "the engine's hand-off (s)": sum(max(v.get("harness_s", {}).get("engine", 0.0) - v.get("judge_s", 0.0), 0.0)
                                         for v in verdicts),
    }


def phases(events: list[dict]) -> list[tuple[str, float]]:
    """The judges' phases summed over the job's evaluations, longest first."""
    total: dict[str, float] = {}
    for e in events:
        if e["kind"] == "CandidateEvaluated":
            for name, seconds in e["verdict"].get("phase_s", {}).items():
                total[name] = total.get(name, 0.0) + seconds
    return sorted(total.items(), key=lambda kv: -kv[1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default=None, help="also write the figures here")
    parser.add_argument("--warm", action="store_true", help="keep this user's compile store and temp folder")
    parser.add_argument("overrides", nargs="*", help="run.py's overrides, after --")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="kgb-first-run-"))
    env = dict(os.environ)
    if not args.warm:
        for name in ("XDG_CACHE_HOME", "TMPDIR"):
            env[name] = str(scratch / name.lower())
            Path(env[name]).mkdir()
    root = scratch / "outputs"
    command = [sys.executable, "run.py", f"tracking.root={root}", *args.overrides]
    log = scratch / "run.log"
    print(f"running {' '.join(command[1:])} (log: {log})", file=sys.stderr, flush=True)
    with MemorySampler() as memory, open(log, "w") as out:
        launched = time.time()
        code = subprocess.run(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
        wall = time.time() - launched
    logs = sorted(root.glob("jobs/*/events.jsonl"))
    if code != 0 or not logs:
        print(f"run.py ended with exit code {code}; its output: {log}", file=sys.stderr)
        return code or 1
    events = [json.loads(line) for p in logs for line in p.read_text().splitlines() if line.strip()]
    figures = {"wall, launch to exit (s)": wall, **summarise(events, launched),
               "GPU memory peak (MiB, all GPUs)": max(memory.samples) if memory.samples else None,
               "GPU memory median (MiB)": statistics.median(memory.samples) if memory.samples else None}
    print(f"`python {' '.join(command[1:2] + args.overrides)}` from a fresh tracking root"
          f"{'' if args.warm else ' and an empty compile store'}\n")
    print("| figure | value |\n|---|---|")
    for name, value in figures.items():
        print(f"| {name} | {'-' if value is None else f'{value:.1f}' if isinstance(value, float) else value} |")
    print("\n| the judges' phase, summed | seconds |\n|---|---|")
    for name, seconds in phases(events)[:PHASES_SHOWN]:
        print(f"| {name} | {seconds:.1f} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"figures": figures, "phases": dict(phases(events))}, indent=1))
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
