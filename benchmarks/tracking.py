"""The tracking store at sweep scale: rebuild, live projection and query times, store sizes.

    python benchmarks/tracking.py N [--from OUTPUTS_DIR] [--work DIR] [--compare-with KGB_CHECKOUT]

Synthesises N trials in 10 jobs (5 methods x 2 chips) from real event logs: the trials of
OUTPUTS_DIR's logs (default: a fresh `python run.py` of three operators on the CPU) give
each synthetic trial its shape (events, verdicts, cases, logs, wall time); every candidate
is the real solution.py of an operator of the dataset; LLM methods get ModelCalled,
CompletionParsed and one candidate per round, their prompt the operator's spec; trials
on `nvidia` get timed cases. Then it measures, on this machine:

- `python -m kgb.tracking rebuild` of the N trials into an empty store, and again into
  the same store (which must give the same leaderboard, with one run per trial);
- projection per trial of one more job of N/10 trials, projected after each trial as a
  live job does, into the store that already holds the N;
- `python -m kgb.query leaderboard`, `report` and `best` (whole commands, as a user runs them);
- the store: database bytes, artifact files and bytes (a file linked twice counts once).

With --compare-with, the same rebuild is also run with the kgb of another checkout (e.g.
an older commit) for the before/after figures.

    python benchmarks/tracking.py --queries-only STORE_DB [--repeat K] [--work DIR]

times only the queries, K times each, over a store an earlier run left (WORK/store/mlflow.db):
for before/after figures of a query without rebuilding the store.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kgb import operators  # noqa: E402
from kgb.evaluate.verdict import CaseResult, Status, Verdict  # noqa: E402
from kgb.tracking.blobs import BlobStore  # noqa: E402
from kgb.tracking.encoding import to_json  # noqa: E402
from kgb.tracking.events import (  # noqa: E402
    CandidateEvaluated,
    CandidateProposed,
    CompletionParsed,
    Event,
    Extraction,
    ModelCalled,
    RunFinished,
    RunStarted,
    TrialEnd,
    TrialFinished,
    TrialStarted,
)
from kgb.tracking.log import read_events  # noqa: E402
from kgb.tracking.projections import TrialOutcome, run_started, trial_outcomes  # noqa: E402
from kgb.usage import Usage  # noqa: E402

METHODS = (("expert", "none"), ("files", "none"), ("oneshot", "claude-opus-4-6"),
           ("passk", "claude-opus-4-6"), ("refine", "claude-opus-4-6"))
CHIPS = ("nvidia", "cpu")
REAL_OPS = ("aten::add", "aten::softmax", "vllm::rms_norm")
FAILURES = (Status.WRONG_OUTPUT, Status.COMPILE_ERROR, Status.RUNTIME_ERROR)


def real_logs(source: Path | None, work: Path) -> list[Path]:
    """Event logs of real runs: those under `source`, or a new CPU run of three operators."""
    if source is None:
        source = work / "real"
        subprocess.run([sys.executable, "run.py", "chip=cpu", "source=all", f"ops=[{','.join(REAL_OPS)}]",
                        f"tracking.root={source}", "tracking.mlflow=false"], cwd=REPO, check=True)
    logs = sorted(source.glob("jobs/*/events.jsonl"))
    if not logs:
        raise SystemExit(f"no event logs under {source}/jobs/")
    return logs


def templates(logs: list[Path]) -> list[tuple[TrialOutcome, dict]]:
    """Finished trials of real logs with the config of the job that ran them."""
    found = []
    for path in logs:
        events = read_events(path)
        started = run_started(events)
        for t in trial_outcomes(events).values():
            if t.finished and t.best is not None and started is not None:
                found.append((t, started.config))
    if not found:
        raise SystemExit("the real logs hold no finished trial with a verdict")
    return found


class Synthesis:
    """Writes synthetic jobs under root/jobs and their texts under root/blobs."""

    def __init__(self, root: Path, shapes: list[tuple[TrialOutcome, dict]], seed: int = 0):
        self.root, self.shapes = root, shapes
        self.blobs = BlobStore(root / "blobs")
        self.rng = random.Random(seed)
        self.ops = operators.select("all", None)
        self.clock = 1_790_000_000.0
        self._texts: dict[str, tuple[str, str]] = {}  # op -> (solution blob, spec blob)

    def texts(self, op: str) -> tuple[str, str]:
        if op not in self._texts:
            spec = operators.load(op)
            self._texts[op] = (self.blobs.put(spec.solution_path.read_text()),
                               self.blobs.put(json.dumps({"messages": [{"role": "user", "content": spec.path.read_text()}]})))
        return self._texts[op]

    def job(self, method: str, model: str, chip: str, trials: int, tag: str = "") -> Path:
        job = f"{method}-{model}-all-{chip}-{hashlib.sha256(f'{method}{chip}{tag}'.encode()).hexdigest()[:10]}"
        shape, config = self.shapes[0]
        events: list[Event] = [RunStarted(
            job=job, method=method, model=model, source="all", chip=chip, config={**config, "method": {"name": method}},
            git_commit=None, packages={}, device="NVIDIA H200" if chip == "nvidia" else "cpu (Triton interpreter)",
            driver=None, specs={}, n_ops=min(trials, len(self.ops)))]
        for i in range(trials):
            op, sample = self.ops[i % len(self.ops)], i // len(self.ops)
            key = hashlib.sha256(f"{job}/{op}/{sample}".encode()).hexdigest()[:16]
            events += self.trial(job, key, op, sample, method, model, chip)
        events.append(RunFinished(job=job, wall_s=self.clock - events[0].ts, trials_run=trials, trials_skipped_as_done=0))
        path = self.root / "jobs" / job / "events.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as f:
            for seq, e in enumerate(events):
                f.write(json.dumps(to_json(dataclasses.replace(e, seq=seq, ts=e.ts or self.clock))) + "\n")
        return path

    def stamp(self, e: Event, seconds: float = 0.01) -> Event:
        self.clock += seconds
        return dataclasses.replace(e, ts=self.clock)

    def trial(self, job: str, key: str, op: str, sample: int, method: str, model: str, chip: str) -> list[Event]:
        shape, _ = self.shapes[self.rng.randrange(len(self.shapes))]
        base = shape.best.verdict
        assert base is not None
        solution, prompt = self.texts(op)
        out: list[Event] = [self.stamp(TrialStarted(job=job, trial=key, op=op, spec_version=1, sample=sample))]
        if method == "files" and self.rng.random() < 0.1:
            out.append(self.stamp(TrialFinished(job=job, trial=key, end=TrialEnd.NO_CANDIDATE, reason=f"no file for {op}")))
            return out
        rounds = {"oneshot": 1, "passk": self.rng.randint(1, 3), "refine": self.rng.randint(1, 3)}.get(method, 1)
        final_correct = method == "expert" or self.rng.random() < 0.7
        for r in range(1, rounds + 1):
            source = solution
            if model != "none":  # a model's kernel differs from trial to trial
                completion = f"```python\n# {key} round {r}\n{self.blobs.get(solution)}```\n"
                source = self.blobs.put(f"# {key} round {r}\n{self.blobs.get(solution)}")
                answer = self.blobs.put(completion)
                request = hashlib.sha256(f"{key}{r}".encode()).hexdigest()
                usage = Usage(input_tokens=self.rng.randint(2000, 4000), output_tokens=self.rng.randint(800, 2500))
                usage = dataclasses.replace(usage, cost_usd=usage.input_tokens * 5e-6 + usage.output_tokens * 25e-6)
                out.append(self.stamp(ModelCalled(job=job, trial=key, provider="anthropic", model=model, request_hash=request,
                                                  request_blob=prompt, response_blob=answer, usage=usage, latency_s=20.0), 20.0))
                out.append(self.stamp(CompletionParsed(job=job, trial=key, request_hash=request, round=r,
                                                       outcome=Extraction.ONE_BLOCK, blocks=1)))
            candidate = f"c{r}-{source[:8]}"
            out.append(self.stamp(CandidateProposed(job=job, trial=key, candidate=candidate, source_blob=source, origin=f"round {r}")))
            verdict, logs = self.verdict(base, chip, correct=final_correct and r == rounds)
            out.append(self.stamp(CandidateEvaluated(job=job, trial=key, candidate=candidate, verdict=verdict, logs_blob=logs),
                                  max(base.eval_s, 1.0)))
        out.append(self.stamp(TrialFinished(job=job, trial=key, end=TrialEnd.COMPLETED, wall_s=shape.wall_s), 0.1))
        return out

    def verdict(self, base: Verdict, chip: str, correct: bool) -> tuple[Verdict, str | None]:
        if not correct:
            status = self.rng.choice(FAILURES)
            message = f"{status.value}: case smoke-0 differs from the reference (max abs err 0.{self.rng.randint(1, 99)})"
            case = CaseResult("smoke-0", "smoke", status, message)
            log = self.blobs.put(f"Traceback (most recent call last):\n  ...\n{message}\n") if status != Status.WRONG_OUTPUT else None
            return Verdict(status, message, (case,), device=base.device), log
        if chip != "nvidia":
            return base, None
        baseline = self.rng.uniform(5, 500)
        bench = CaseResult("bench-0", "bench", Status.CORRECT, latency_us=baseline / self.rng.lognormvariate(0, 0.5),
                           baseline_us=baseline, timing_mode="graph")
        return dataclasses.replace(base, cases=(*base.cases, bench), device="cuda", baseline="torch"), None


def synthesise(n: int, shapes: list[tuple[TrialOutcome, dict]], root: Path, seed: int = 0) -> list[Path]:
    """N trials in len(METHODS) x len(CHIPS) jobs."""
    synth = Synthesis(root, shapes, seed)
    jobs = [(m, model, chip) for m, model in METHODS for chip in CHIPS]
    return [synth.job(m, model, chip, n // len(jobs) + (i < n % len(jobs))) for i, (m, model, chip) in enumerate(jobs)]


# --- measurements ------------------------------------------------------------------

CPU_SECONDS: dict[str, float] = {}  # command name -> CPU seconds (user + system) of its last run


def timed(cmd: list[str], cwd: Path = REPO, name: str = "") -> tuple[float, str]:
    """Wall seconds and output of a command; its CPU seconds, its worker processes' included,
    go to CPU_SECONDS[name] (on a shared machine the wall time also counts others' work)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    if name:
        CPU_SECONDS[name] = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, done.stdout


def store_size(db: Path, blobs: Path) -> dict[str, float]:
    """Database bytes; artifact files (as listed in runs) and bytes on disk (inodes once),
    and of those the bytes the store adds (not shared with the event logs' blobs)."""
    artifacts = db.parent / "mlartifacts"
    files, inodes = 0, {}
    for dirpath, _, names in os.walk(artifacts):
        for name in names:
            st = os.stat(os.path.join(dirpath, name))
            inodes[st.st_ino] = st.st_size
            files += ".kgb-cas" not in dirpath
    shared = {os.stat(os.path.join(d, n)).st_ino for d, _, names in os.walk(blobs) for n in names}
    db_bytes = sum(p.stat().st_size for p in db.parent.glob(db.name + "*"))
    return {"db_bytes": db_bytes, "artifact_files": files, "artifact_bytes": sum(inodes.values()),
            "added_bytes": sum(size for ino, size in inodes.items() if ino not in shared)}


def trial_runs(db: Path) -> tuple[int, int]:
    """Live trial runs, and distinct (job, trial) pairs among them."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT j.value, k.value FROM runs r JOIN tags t ON t.run_uuid = r.run_uuid AND t.key = 'kgb.kind' AND t.value = 'trial'"
            " JOIN tags j ON j.run_uuid = r.run_uuid AND j.key = 'kgb.job' JOIN tags k ON k.run_uuid = r.run_uuid AND k.key = 'kgb.trial'"
            " WHERE r.lifecycle_stage = 'active'").fetchall()
    return len(rows), len(set(rows))


def live_projection(uri: str, path: Path, blobs: BlobStore, background: bool, log_path: Path) -> tuple[list[float], float]:
    """A live job's bookkeeping after each finished trial, as kgb/run.py does it: its events
    appended one by one to a new EventLog, and after each TrialFinished the log's view, the
    trial's outcome (the progress line) and the projection call. Returns the seconds each
    trial's bookkeeping kept the job waiting, and the seconds from the job's first call
    until its last one (which waits for everything) returned."""
    from kgb.tracking.log import EventLog
    from kgb.tracking.mlflow_projection import MlflowProjection

    projection = MlflowProjection(uri, "kgb", background=background)
    log = EventLog(log_path)
    start = time.perf_counter()
    waits = []
    for e in read_events(path):
        log.append(e)
        if isinstance(e, RunStarted):
            projection.project(log.events(), blobs)  # the job starts: its run is made at once
        elif isinstance(e, TrialFinished):
            t0 = time.perf_counter()
            events = log.events()
            assert log.outcome(e.trial).finished
            projection.project(events, blobs)
            waits.append(time.perf_counter() - t0)
    log.close()
    projection.project(log.events(), blobs)  # RunFinished: waits for the follower
    return waits, time.perf_counter() - start


def rebuild(root: Path, db: Path, kgb: Path = REPO) -> float:
    """Seconds for `python -m kgb.tracking rebuild`, with the kgb of the checkout `kgb`."""
    return timed([sys.executable, "-m", "kgb.tracking", "rebuild", str(root.resolve()), "--tracking-uri", f"sqlite:///{db.resolve()}"],
                 cwd=kgb, name="rebuild")[0]


def queries(work: Path) -> dict[str, list[str]]:
    """The query commands timed, by name (without --tracking-uri)."""
    return {
        "leaderboard": ["leaderboard", "--format", "csv"],
        "report": ["report", "--dest", str(work / "report")],
        "report (tables only)": ["report", "--no-plots", "--dest", str(work / "report-tables")],
        "best": ["best", "--op", operators.select("all", None)[0], "--chip", "nvidia", "--dest", str(work / "best")],
    }


def queries_only(db: Path, work: Path, repeat: int) -> None:
    """Each query `repeat` times over an existing store: wall and CPU seconds, and the load."""
    uri = f"sqlite:///{db.resolve()}"
    print("| query | run | load average before (2 cores) | wall s | CPU s |\n|---|---|---|---|---|")
    for name, command in queries(work).items():
        for i in range(repeat):
            load = os.getloadavg()[0]
            wall, _ = timed([sys.executable, "-m", "kgb.query", *command, "--tracking-uri", uri], name=name)
            print(f"| {name} | {i + 1} | {load:.2f} | {wall:.3f} | {CPU_SECONDS[name]:.3f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", type=int, nargs="?", help="trials to synthesise (not with --queries-only)")
    parser.add_argument("--from", dest="source", type=Path, help="outputs dir of real runs (default: run three operators now)")
    parser.add_argument("--work", type=Path, help="where to write (default: a temporary folder)")
    parser.add_argument("--compare-with", type=Path, help="a checkout of another kgb: its rebuild, for before/after")
    parser.add_argument("--queries-only", type=Path, metavar="STORE_DB", help="only time the queries over this store")
    parser.add_argument("--repeat", type=int, default=3, help="with --queries-only: runs of each query")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="kgb-tracking-bench-"))
    if args.queries_only:
        return queries_only(args.queries_only, work, args.repeat)
    if args.n is None:
        parser.error("give the number of trials N, or --queries-only STORE_DB")
    shapes = templates(real_logs(args.source, work))
    root = work / "outputs"
    if not (root / "jobs").exists():  # a work folder of an earlier run keeps its synthetic jobs
        synthesise(args.n, shapes, root)
    live_trials = 0
    db = work / "store" / "mlflow.db"
    shutil.rmtree(db.parent, ignore_errors=True)  # the rebuild goes into an empty store
    for old in work.glob("live-*"):
        shutil.rmtree(old)
    uri = f"sqlite:///{db}"
    figures: dict[str, float | str] = {"trials": args.n, "real trial shapes": len(shapes),
                                       "load average at start (2 cores)": os.getloadavg()[0]}

    figures["rebuild s"] = rebuild(root, db)
    figures["rebuild CPU s (all its processes)"] = CPU_SECONDS["rebuild"]
    size = store_size(db, root / "blobs")
    figures.update({"db MB": size["db_bytes"] / 1e6, "artifact MB": size["artifact_bytes"] / 1e6,
                    "artifact MB not shared with the blobs": size["added_bytes"] / 1e6,
                    "artifact files": size["artifact_files"],
                    "KB per trial": size["artifact_bytes"] / 1e3 / args.n, "files per trial": size["artifact_files"] / args.n})
    q = [sys.executable, "-m", "kgb.query"]
    board = ""
    for name, command in queries(work).items():
        figures[f"{name} s"], out = timed([*q, *command, "--tracking-uri", uri], name=name)
        figures[f"{name} CPU s"] = CPU_SECONDS[name]
        board = out if name == "leaderboard" else board

    for background in (False, True):
        live = Synthesis(root / "live", shapes, seed=1).job(
            "refine", "claude-opus-4-6", "nvidia", max(1, args.n // 10), tag=f"live-{background}")
        waits, total = live_projection(uri, live, BlobStore(root / "live" / "blobs"), background,
                                       work / f"live-{background}" / "events.jsonl")
        live_trials += len(waits)
        tenth = max(1, len(waits) // 10)
        how = "background" if background else "synchronous"
        figures.update({f"{how}: job waits ms/trial (mean)": 1000 * statistics.mean(waits),
                        f"{how}: job waits ms/trial (first 10%)": 1000 * statistics.mean(waits[:tenth]),
                        f"{how}: job waits ms/trial (last 10%)": 1000 * statistics.mean(waits[-tenth:]),
                        f"{how}: whole live job (log appends, fsync, projection), ms/trial": 1000 * total / len(waits)})
    figures["leaderboard s (with live job)"], board_live = timed([*q, "leaderboard", "--format", "csv", "--tracking-uri", uri])

    figures["rebuild again s"] = rebuild(root, db)
    _, again = timed([*q, "leaderboard", "--format", "csv", "--tracking-uri", uri])
    runs, distinct = trial_runs(db)
    figures["same leaderboard after rebuild again"] = "yes" if again == board_live else "NO"
    figures["trial runs / distinct / expected"] = f"{runs} / {distinct} / {args.n + live_trials}"

    if args.compare_with:
        old = work / "store-before" / "mlflow.db"
        figures["before: rebuild s"] = rebuild(root, old, args.compare_with.resolve())
        size = store_size(old, root / "blobs")
        figures.update({"before: db MB": size["db_bytes"] / 1e6, "before: artifact MB": size["artifact_bytes"] / 1e6,
                        "before: KB per trial": size["artifact_bytes"] / 1e3 / args.n,
                        "before: files per trial": size["artifact_files"] / args.n})
    figures["load average at end"] = os.getloadavg()[0]
    print("| measure | value |\n|---|---|")
    for name, value in figures.items():
        print(f"| {name} | {value:.3f} |" if isinstance(value, float) else f"| {name} | {value} |")
    print(f"(work folder: {work})", file=sys.stderr)


if __name__ == "__main__":
    main()
