"""The README's main command as a newcomer meets it, timed and taken apart; prints a table.

    python benchmarks/first_run.py [--json F] [--warm] [--second] [-- run.py overrides, e.g. chip=nvidia 'ops=[aten::t]']

Runs `python run.py` into a fresh tracking root (so every baseline of the chip is measured,
as on a new machine) with an empty compile store and temp folder unless --warm, samples the
GPUs' memory each second where `nvidia-smi` answers, and reads the job's event log back:
how long from the launch to `RunStarted`, to the first trial and to the end; how many
evaluations ran out of GPU memory among others and ran again, and what that cost; what the
judges waited for. Issue 11's first goal is this command on one H200 in three minutes.
With --second it then runs a chip's later job (the chip's baselines known, new compiles), as
an agent's calls of the judge meet it; --baselines-from runs that later job alone, on a
machine that never ran the first, given the chip's baselines from the first job's event log
(its BaselineMeasured events, which count where the log's judge, device and libraries are
this machine's: kgb.tracking.baselines.fingerprint). With KGB_GPU_TRACE set, it says which operators held
the GPU's memory (nvidia-smi's processes, put down to the judge whose operator the trace names).

Until session 34 every H200 figure for that goal came from benchmarks/throughput.py, which
is given the chip's baselines and an order by earlier sweeps; and the GPU memory peaks of
sessions 31-33 were `nvidia-smi` lines compared as text ("99887 MiB" after "142373 MiB").
Here memory is read as numbers.
"""

from __future__ import annotations

import argparse
import gzip
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
sys.path.insert(0, str(REPO))

from kgb.evaluate.verdict import Rerun  # noqa: E402

PHASES_SHOWN = 8
TRACE_ENV = "KGB_GPU_TRACE"  # kgb.evaluate.timing_lock's: the judges' trace, which names each judge's operator


class MemorySampler:
    """The GPUs' used memory in MiB each second, summed over the GPUs, while it runs; and
    each process's, with its ancestors' pids, so that a judge's and its candidate
    process's memory can be put down to the operator it judged (`by_operator`)."""

    def __init__(self) -> None:
        self.samples: list[int] = []
        self.processes: list[dict[int, int]] = []  # each second: MiB by pid
        self.ancestors: dict[int, list[int]] = {}  # pid -> its parent, grandparent, ...
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
            out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, check=False).stdout
            held = parse_processes(out)
            for pid in held:
                if pid not in self.ancestors:
                    self.ancestors[pid] = ancestors(pid)
            self.processes.append(held)


def parse_processes(text: str) -> dict[int, int]:
    """`nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits` as MiB by pid."""
    held: dict[int, int] = {}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            held[int(parts[0])] = held.get(int(parts[0]), 0) + int(parts[1])
    return held


def ancestors(pid: int) -> list[int]:
    """The process's parent, its parent's, ... as /proc says while they live (empty where
    this process cannot see it: another PID namespace)."""
    chain = []
    while pid > 1 and len(chain) < 16:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            break
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        chain.append(pid)
    return chain


def by_operator(processes: list[dict[int, int]], ancestry: dict[int, list[int]],
                judged: dict[int, str]) -> tuple[dict[str, int], dict[str, int]]:
    """Each operator's most GPU memory in one sample (its judge and the judge's descendants,
    the candidate process among them), and what held the sample with the most in all.
    `judged`: the operator of each judge's pid, from the judges' trace; what belongs to no
    judge that judged is "the harness and spare judges"."""
    def owner(pid: int) -> str:
        for p in (pid, *ancestry.get(pid, [])):
            if p in judged:
                return judged[p]
        return "the harness and spare judges"

    most: dict[str, int] = {}
    busiest: dict[str, int] = {}
    for held in processes:
        sample: dict[str, int] = {}
        for pid, mib in held.items():
            sample[owner(pid)] = sample.get(owner(pid), 0) + mib
        for name, mib in sample.items():
            most[name] = max(most.get(name, 0), mib)
        if sum(sample.values()) > sum(busiest.values()):
            busiest = sample
    return most, busiest


def judged_operators(trace: Path) -> dict[int, str]:
    """Each judge's pid and the operator it judged, from the judges' trace (KGB_GPU_TRACE)."""
    judged: dict[int, str] = {}
    if trace.is_file():
        for line in trace.read_text().splitlines():
            record = json.loads(line)
            if record.get("tag") and record["kind"] in ("turn", "section"):
                judged[record["pid"]] = record["tag"]
    return judged


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
        "... of them ahead of their trials": sum(e["kind"] == "BaselineMeasured" and e.get("trial") is None
                                                 for e in events),
        "evaluations summed (s)": sum(v.get("eval_s", 0.0) for v in verdicts),
        # logs older than session 53 say only how long earlier runs took, which only running out made
        "evaluations run again after running out of GPU memory": sum(
            Rerun.RAN_OUT in v["again"] if "again" in v else v.get("ran_out_s", 0.0) > 0 for v in verdicts),
        "evaluations run again after a case was timed by its first call": sum(
            Rerun.FIRST_CALL in v.get("again", ()) for v in verdicts),
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


def seed_baselines(events: Path, root: Path) -> int:
    """Write the BaselineMeasured events of an earlier job's log where a job under `root` keeps
    its log, so that kgb's book of the chip's baselines reads them (kgb.tracking.baselines);
    how many there were. The job run next has another id and judges every operator."""
    opener = gzip.open if events.suffix == ".gz" else open
    with opener(events, "rt") as f:
        lines = [line for line in f if json.loads(line).get("kind") == "BaselineMeasured"]
    if not lines:
        raise SystemExit(f"{events} holds no BaselineMeasured event")
    folder = root / "jobs" / "known-baselines"
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text("".join(lines))
    return len(lines)


def run_job(command: list[str], env: dict[str, str], log: Path, root: Path) -> tuple[int, float, list[dict], MemorySampler, float]:
    """One run of run.py into `root`: its exit code, wall time, the events it wrote and the
    memory sampled meanwhile."""
    before = {p: len(p.read_text().splitlines()) for p in root.glob("jobs/*/events.jsonl")}
    print(f"running {' '.join(command[1:])} (log: {log})", file=sys.stderr, flush=True)
    with MemorySampler() as memory, open(log, "w") as out:
        launched = time.time()
        code = subprocess.run(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, check=False).returncode
        wall = time.time() - launched
    events = [json.loads(line) for p in sorted(root.glob("jobs/*/events.jsonl"))
              for line in p.read_text().splitlines()[before.get(p, 0):] if line.strip()]
    return code, wall, events, memory, launched


def figures_of(wall: float, events: list[dict], launched: float, memory: MemorySampler) -> dict:
    return {"wall, launch to exit (s)": wall, **summarise(events, launched),
            "GPU memory peak (MiB, all GPUs)": max(memory.samples) if memory.samples else None,
            "GPU memory median (MiB)": statistics.median(memory.samples) if memory.samples else None}


def print_table(title: str, figures: dict, events: list[dict]) -> None:
    print(f"{title}\n\n| figure | value |\n|---|---|")
    for name, value in figures.items():
        print(f"| {name} | {'-' if value is None else f'{value:.1f}' if isinstance(value, float) else value} |")
    print("\n| the judges' phase, summed | seconds |\n|---|---|")
    for name, seconds in phases(events)[:PHASES_SHOWN]:
        print(f"| {name} | {seconds:.1f} |")


def print_memory(memory: MemorySampler, trace: Path | None) -> dict[str, int]:
    """The operators that held the most GPU memory, where nvidia-smi names the processes and
    the judges' trace names their operators."""
    if trace is None or not memory.processes:
        return {}
    most, busiest = by_operator(memory.processes, memory.ancestors, judged_operators(trace))
    if not most:
        print("\nnvidia-smi named no process this one can see (another PID namespace?)")
        return {}
    print("\nthe most GPU memory held at once (MiB), judge and candidate process together: "
          + ", ".join(f"{name} {mib:,}" for name, mib in sorted(most.items(), key=lambda kv: -kv[1])[:12]))
    print(f"the busiest second ({sum(busiest.values()):,} MiB by process): "
          + ", ".join(f"{name} {mib:,}" for name, mib in sorted(busiest.items(), key=lambda kv: -kv[1])))
    return most


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default=None, help="also write the figures here")
    parser.add_argument("--warm", action="store_true", help="keep this user's compile store and temp folder")
    parser.add_argument("--second", action="store_true",
                        help="then a chip's later job: run.py again into the same tracking root (its baselines known) "
                             "as sample 1 (method.samples=2), its compile store emptied again unless --warm")
    parser.add_argument("--baselines-from", default=None, type=Path, metavar="EVENTS.jsonl.gz",
                        help="run only a later job: the chip's baselines taken from this earlier job's event log")
    parser.add_argument("--events", default=None, type=Path,
                        help="keep each job's event log here, gzipped (first-events.jsonl.gz, second-...)")
    parser.add_argument("overrides", nargs="*", help="run.py's overrides, after --")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="kgb-first-run-"))
    root = scratch / "outputs"
    trace = Path(os.environ[TRACE_ENV]) if os.environ.get(TRACE_ENV) else None
    report: dict = {}
    runs = ("first", "second") if args.second else ("first",)
    if args.baselines_from is not None:
        known = seed_baselines(args.baselines_from, root)
        print(f"{known} baselines of the chip known from {args.baselines_from}", file=sys.stderr)
        runs = ("later",)
    for run in runs:
        env = dict(os.environ)
        if not args.warm:
            for name in ("XDG_CACHE_HOME", "TMPDIR"):
                env[name] = str(scratch / run / name.lower())
                Path(env[name]).mkdir(parents=True)
        if trace is not None:
            env[TRACE_ENV] = str(trace.with_name(f"{trace.name}.{run}"))
        extra = ["method.samples=2"] if run == "second" else []
        command = [sys.executable, "run.py", f"tracking.root={root}", *args.overrides, *extra]
        code, wall, events, memory, launched = run_job(command, env, scratch / f"{run}.log", root)
        if code != 0 or not events:
            print(f"run.py ended with exit code {code}; its output: {scratch / f'{run}.log'}", file=sys.stderr)
            return code or 1
        if args.events is not None:
            args.events.mkdir(parents=True, exist_ok=True)
            with gzip.open(args.events / f"{run}-events.jsonl.gz", "wt") as kept:
                kept.writelines(json.dumps(e) + "\n" for e in events)
        figures = figures_of(wall, events, launched, memory)
        into = {"first": "a fresh tracking root", "second": "the same tracking root, the chip's baselines known",
                "later": f"a tracking root given the chip's baselines from {args.baselines_from}"}[run]
        print_table(f"\n`python {' '.join(command[1:2] + args.overrides + extra)}`, the {run} job into {into}"
                    f"{'' if args.warm else ', its compile store empty'}", figures, events)
        held = print_memory(memory, Path(env[TRACE_ENV]) if trace is not None else None)
        for line in (scratch / f"{run}.log").read_text(errors="replace").splitlines():
            if line.startswith("kgb: ") and "timed ahead" in line:  # what the job's baseline scout did
                print(line)
        report[run] = {"figures": figures, "phases": dict(phases(events)), "gpu_mib_by_operator": held}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
