"""The core loop of one job: its trials (kgb.trials), so many at once, then its summary.

config -> job -> trials -> events -> projections. Everything a trial does is an event in
outputs/jobs/<job>/events.jsonl; MLflow is updated from those events as trials finish.
Running the same job again skips finished trials and resumes unfinished ones.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kgb import chips, methods, operators
from kgb.baseline_scout import BaselineScout, say
from kgb.config import Config
from kgb.evaluate import EvalSettings, start_engine
from kgb.evaluate.sandbox import check_hidden_from_candidates
from kgb.identity import Identity
from kgb.job import (
    Chip,
    changed_specs,
    config_dict,
    driver_version,
    eval_settings,
    events_path,
    git_commit,
    identity,
    packages,
    resolve_chip,
    running,
    secret_env,
    spec_record,
)
from kgb.models.model import Model
from kgb.preflight import check_settings, unpriced
from kgb.progress import Progress, summary_table
from kgb.tracking.baselines import fingerprint, load_book
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import Event, RunFinished, RunStarted
from kgb.tracking.follower import Opening
from kgb.tracking.log import EventLog
from kgb.tracking.projections import JobSummary, summarize, trial_outcomes
from kgb.trial import attempts_s, finish, start
from kgb.trial_order import judging_seconds, longest_first
from kgb.trials import Trial, budget_note, judged_again, run_trial, trials_of

# Trials at once per GPU, by its memory: each judgement holds copies of its largest case's
# inputs on the GPU, besides two CUDA contexts (about 0.6 GB each; three until judge v15).
# On the H200 (141 GB, session 24, docs/gpu-results.md) 12 judgements at once held a median
# 58 GB and at most 137 GB; 16 at once ran out among others 7 times in 210, which the memory
# gate (kgb.evaluate.gpus) absorbed, and judged the sweep in 477 s against 515 s for 12.
# Under v15 (session 30) 20 at once judged fewer operators in the first 175 s than 16 did;
# under v16 with one work queue per context (session 33) the sweep took 198.8 s at 20 against
# 207.5-219.9 s at 16 (session 32), and with yielding waits 188.6 s at 20 against 194.0 s at
# 24; its GPU memory peaked at 126,522-140,366 MiB at 20 (107,451-142,647 at 16, session 32),
# and the memory gate ran the few evaluations that ran out among others again.
GPU_MEMORY_PER_TRIAL_MIB = 7168
MAX_TRIALS_PER_GPU = 20
# ... and on a GPU host up to a quarter more trials than cores: a third of a sweep's
# evaluation time is waiting for the GPU's timing turns, and the host was 20-40% idle at
# 16 in flight on 16 cores (session 33)
GPU_TRIALS_PER_CORE = 1.25
GPU_TRIALS_UNKNOWN_MEMORY = 8  # where nvidia-smi cannot say


def prepare(cfg: Config) -> tuple[list[str], methods.Method, Model | None]:
    """The job's operators, method and model; fails here, before any trial (and before
    Hydra writes anything: kgb.preflight), on a bad setting, selection, method or model."""
    check_settings(cfg)
    if cfg.method.name != "expert":  # the known-good solutions themselves have nothing to find
        check_hidden_from_candidates(operators.REPO_ROOT)
    ops = operators.select(cfg.source.name, cfg.ops)
    if not ops:
        raise ValueError(f"no operators selected (source={cfg.source.name}, ops={cfg.ops})")
    return ops, methods.build(cfg.method), build_model(cfg)


def run_job(cfg: Config) -> JobSummary:
    """Run (or resume) one job and return its summary."""
    ops, method, model = prepare(cfg)
    chip = resolve_chip(cfg.chip)
    settings = eval_settings(cfg.eval, chip, secret_env(cfg))
    ident = identity(cfg, chip, settings)
    # Without `ops=` the job is the source's, whatever it holds: an operator added to it is a
    # new trial of the same job, judged (and paid for) alone by its next run. Until session 45
    # the id hashed the operator list, and one operator more made every default job new.
    job = ident.job_id(cfg.source.name, ops if cfg.ops else None)
    path = events_path(Path(cfg.tracking.root), job)
    with running(path):  # one process at a time: a second would judge (and pay for) every trial again
        return _run_held(cfg, job, path, ops, method, model, chip, settings, ident)


def _run_held(cfg: Config, job: str, path: Path, ops: list[str], method: methods.Method, model: Model | None,
              chip: Chip, settings: EvalSettings, ident: Identity) -> JobSummary:
    """The body of `run_job`, while this process holds the job (kgb.job.running): the trials
    that no earlier run of it finished, then its summary."""
    root = Path(cfg.tracking.root)
    blobs = BlobStore(root / "blobs")
    log = EventLog(path)  # reads what an earlier run of this job left
    earlier = trial_outcomes(log.events())
    # whether anything is left to judge, guessed before the specs load (an edited file is not seen)
    judged = {(o.op, o.sample) for o in earlier.values() if o.finished}
    if chip.present and any((op, i) not in judged for op in ops for i in range(cfg.method.samples)):
        start_engine(settings)  # while the specs, the event log, MLflow and the baselines get ready
    specs = {op: operators.load(op) for op in ops}
    trials = trials_of(specs, method, ident, cfg.method.samples)
    # an infrastructure failure, a trial the job's budget stopped, are not finished: run again
    todo = [t for t in trials if not (t[2] in earlier and earlier[t[2]].finished)]
    kept_ops = {spec.id for spec, _, key in trials if key in earlier and earlier[key].finished}
    changed = changed_specs(log.events(), specs, kept_ops)
    if changed:
        print(f"note: {len(changed)} operator(s) keep trials judged under an earlier spec.py of the same VERSION "
              f"({', '.join(changed[:5])}{', ...' if len(changed) > 5 else ''}); bump a spec's VERSION to judge it again")
    if again := judged_again(todo, earlier):
        print(f"note: {len(again)} operator(s) are judged again: what method={cfg.method.name} reads for them "
              f"changed since ({', '.join(again[:5])}{', ...' if len(again) > 5 else ''})")
    order = {op: i for i, op in enumerate(longest_first(ops, settings.device))}
    todo.sort(key=lambda item: order[item[0].id])  # so that the job does not end on a long trial alone
    # Timed jobs measure each case's baseline once per chip, for every job under this root. Read
    # before the run is logged as started: it reads every job's log, seconds under a full root,
    # and a Ctrl-C meanwhile must not leave a started run with no end (the try below logs one).
    book = load_book(root, fingerprint(chips.device_name(), ident.settings, packages())) if settings.time_cases else None
    started_at = time.perf_counter()
    unbounded_commands(cfg)
    log.append(RunStarted(
        job=job, method=cfg.method.name, model=cfg.model.name, source=cfg.source.name,
        chip=chip.name, config=config_dict(cfg), git_commit=git_commit(), packages=packages(),
        device=chips.device_name(), driver=driver_version(), n_ops=len(ops),
        specs={op: spec_record(s) for op, s in specs.items()},
        identity=ident.as_dict(), settings=ident.settings, sandbox=sandbox_level(),
        trial_keys=tuple(key for _, _, key in trials),
    ))
    projection = Opening(lambda: open_projection(cfg), log.events, blobs) if cfg.tracking.mlflow else None

    total = len(trials)
    at_once = trials_at_once(cfg.method.concurrency, settings.device)
    # the estimate on each line: the expected seconds of the trials left; while trials run
    # long, a heartbeat with what they logged so far (kgb.progress)
    progress = Progress(total, f"job {job} on {chip.name}, judged under: {ident.settings}",
                        todo=[spec.id for spec, _, _ in todo], expected=judging_seconds(settings.device), width=at_once,
                        heartbeat_s=cfg.progress.heartbeat_s, events_of=lambda key: log.outcome(key).events,
                        limits=getattr(cfg.method, "agent", None))
    progress.skipped_as_done(total - len(todo))
    project_lock = threading.Lock()
    started: list[str] = []  # this run's trials begun, and those of them now finished
    finished: list[str] = []
    kept = lambda: total - len(todo) + len(finished)  # noqa: E731 - trials with a result, earlier runs' too
    budget_spent = threading.Event()  # once the job's cost budget stops a trial, none other starts
    # Once Ctrl-C's end of the run is logged, no trial of the run starts or ends in the log: a
    # trial's end logged after the run's was not in the projection's last call (ended_by) and
    # reached MLflow only with the job's next run (session 47's user walk), which now resumes
    # such a trial instead, its logged model calls and verdicts answered from the log
    # (kgb.trial). `ending` orders each trial's start and end against the run's.
    ending = threading.Lock()
    run_ended = threading.Event()

    def project(events: Sequence[Event]) -> None:
        """Bring MLflow up to date; a store that fails mid-job is given up with one line, and the
        trials go on: their events are in the log, which the next run of the job, or a
        rebuild, projects (until session 45 the job ended there, its running trials lost)."""
        nonlocal projection
        if projection is None:
            return
        try:
            projection.project(events, blobs)
        except Exception as exc:  # noqa: BLE001 - the event log keeps what the store did not take
            projection = None
            print(f"warning: the MLflow projection failed ({type(exc).__name__}: {str(exc)[:300]}); the job goes on "
                  f"and keeps every event in {path}: run it again, or `python -m kgb.tracking rebuild {root} "
                  f"--tracking-uri {cfg.tracking.tracking_uri()}`, to project them", file=sys.stderr)

    begun: set[str] = set()  # operators whose trials have begun: the scout leaves them alone

    def one_trial(item: Trial) -> None:
        spec, sample, key = item
        begun.add(spec.id)
        if budget_spent.is_set():
            return  # its first model call would be refused: the next run goes on
        prior = earlier[key].events if key in earlier else []
        attempt = (earlier[key].attempts if key in earlier else 0) + 1
        with ending:
            if run_ended.is_set():
                return
            t0 = start(log, job, key, spec, sample, attempt) - attempts_s(prior)  # wall_s: every attempt's
        started.append(key)
        progress.began(key, f"{spec.id} #{sample}" if cfg.method.samples > 1 else spec.id)
        end, reason = run_trial(method, chip, spec, settings, log, blobs, job, key, sample, model, prior, book)
        with ending:
            if run_ended.is_set():
                return  # Ctrl-C ended the run meanwhile: the trial is left to the next run, as one cut short
            if end is None:  # stopped by the job's budget: left unfinished, to go on (ctx.prior) in the next run
                budget_spent.set()
            else:
                finish(log, job, key, end, reason, t0)
        events = log.events()
        outcome = log.outcome(key)  # folded as it was logged: no re-fold per trial
        if outcome.finished:
            finished.append(key)
        progress.finished(outcome)
        with project_lock:
            project(events)

    def run_finished(interrupted: bool) -> RunFinished:
        return RunFinished(job=job, wall_s=time.perf_counter() - started_at, trials_run=len(started),
                           trials_skipped_as_done=total - len(todo), interrupted=interrupted)

    def interrupted() -> Interrupted:
        """The run's end logged as interrupted, and MLflow brought up to date with the log so
        far, which ends the job's run KILLED (it stayed RUNNING, its metrics up to a minute
        old, until the job ran again). A second Ctrl-C cuts the wait short: the end is in the
        log, and the job's next run, or a rebuild, projects it."""
        with ending:  # no trial's end after it: each is in the last call below, or left to the next run
            run_ended.set()
            end = log.append(run_finished(interrupted=True))
        if projection is not None:
            print("\nkgb: bringing MLflow up to date (Ctrl-C again to leave that to the job's next run)",
                  file=sys.stderr, flush=True)
            with contextlib.suppress(KeyboardInterrupt), project_lock:
                project(ended_by(log.events(), end))
        return Interrupted(f"interrupted: {kept()} of {total} trials finished are kept in {path}; "
                           "run the same command to go on")

    pool = ThreadPoolExecutor(max_workers=at_once)
    scout = None
    if book is not None and cfg.eval.baselines_ahead:  # the first `at_once` trials begin at once
        coming = list({spec.id: spec for spec, _, _ in todo[at_once:]}.values())
        scout = BaselineScout(coming, settings, book, log, job, begun.__contains__, ending, run_ended).start()
    try:
        with progress.beating():  # ends before the summary, and before Ctrl-C's lines below
            list(pool.map(one_trial, todo))
    except KeyboardInterrupt:  # Ctrl-C: start no other trial, and leave the running ones to the exit
        pool.shutdown(wait=False, cancel_futures=True)
        if scout is not None:
            scout.stop(wait=False)
        raise interrupted() from None
    pool.shutdown()
    if scout is not None:
        say(scout.stop())

    log.append(run_finished(interrupted=False))
    log.close()
    events = log.events()
    project(events)
    outcomes = log.outcomes()  # the log's own fold, as each trial was logged
    ours = [outcomes[key] for _, _, key in trials if key in outcomes]  # not those of operators since removed
    summary = summarize(ours, ident.settings)
    summary_table(ours, summary)
    if summary.usage.total_tokens and (why := unpriced(cfg.model)):
        print(f"note: cost $0 because {why}: set model.price.input and model.price.output "
              "(USD per million tokens) to count what its calls cost")
    if budget_spent.is_set():
        print(budget_note(events, cfg.model.max_job_cost_usd, kept(), total))
    print(f"event log: {path}")
    if projection:
        print(f"MLflow UI: mlflow ui --backend-store-uri {cfg.tracking.tracking_uri()}")
    return summary


def trials_at_once(concurrency: int | None, device: str) -> int:
    """`method.concurrency`, or where unset one trial per CPU core this process may use:
    a trial spends most of its time compiling and checking on the host, and the judge keeps
    timing exclusive per GPU whatever the count. On GPUs GPU_TRIALS_PER_CORE per core and at
    most `trials_per_gpu()` per GPU; the evaluations spread over every visible GPU
    (kgb.evaluate.gpus)."""
    if concurrency is not None:
        return concurrency
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if device == "cpu":
        return max(1, min(cores, 16))
    from kgb.evaluate.gpus import visible_gpus

    return max(1, min(int(cores * GPU_TRIALS_PER_CORE), trials_per_gpu() * max(1, len(visible_gpus()))))


def trials_per_gpu() -> int:
    """GPU_MEMORY_PER_TRIAL_MIB of the smallest GPU's memory per trial, MAX_TRIALS_PER_GPU at
    most (an H200 takes 20, an 80 GB GPU 11)."""
    from kgb.evaluate.gpus import memory_mib

    memories = memory_mib()
    if not memories:
        return GPU_TRIALS_UNKNOWN_MEMORY
    return max(1, min(MAX_TRIALS_PER_GPU, min(memories) // GPU_MEMORY_PER_TRIAL_MIB))


def ended_by(events: Sequence[Event], end: RunFinished) -> Sequence[Event]:
    """The log as it was when `end` was appended: what the projection's last call of an
    interrupted run is given, which ends the job's run in MLflow (kgb.tracking.follower waits
    on such a call). Trials that Ctrl-C left running may append their model calls and
    verdicts after `end`, never their ends (`_run_held`): the job's next run resumes them
    with what they kept."""
    n = len(events)
    while events[n - 1] is not end:
        n -= 1
    return events[:n]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during the trials; its message says what is kept and how to go on (run.py prints it)."""


def build_model(cfg: Config):
    """The model wrapper for methods that call an LLM; None for the others. Fails here,
    before any trial, on a missing API key or a model the endpoint does not serve."""
    from kgb import models
    from kgb.config import LLMMethodConfig

    model = models.build(cfg.model)
    if model is None and isinstance(cfg.method, LLMMethodConfig):
        raise ValueError(f"method {cfg.method.name} calls a model: choose one, e.g. model=claude-opus-4-6 (conf/model/)")
    return model


def sandbox_level() -> str:
    """How candidates will be confined here; said once per job where it is not in full."""
    from kgb.evaluate.sandbox import SandboxLevel, available_level

    level = available_level()
    if level != SandboxLevel.FULL:
        print(f"kgb: candidates run with sandbox={level} on this machine (Landlock and seccomp are both "
              "needed for the full sandbox; see docs/design/threat-model.md)", file=sys.stderr)
    return str(level)


def unbounded_commands(cfg: Config) -> None:
    """Said once per job of an agent method: where this host lets kgb make no pids cgroup
    for an agent's command (kgb.agents.process_bound), its commands' processes are bounded
    by nothing of their own."""
    if getattr(cfg.method, "agent", None) is None:
        return
    from kgb.agents import process_bound

    probe = process_bound.make()
    probe.remove()
    if probe.note:
        print(f"kgb: agents' commands run with {probe.note}", file=sys.stderr)


def open_projection(cfg: Config):
    from kgb.tracking.mlflow_projection import MlflowProjection

    return MlflowProjection(cfg.tracking.tracking_uri(), cfg.tracking.experiment)
