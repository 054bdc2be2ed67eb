"""The core loop of one job: for each operator, one trial per sample.

config -> job -> trials -> events -> projections. Everything a trial does is an event in
outputs/jobs/<job>/events.jsonl; MLflow is updated from those events as trials finish.
Running the same job again skips finished trials and resumes unfinished ones.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kgb import chips, methods, operators
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
    spec_record,
)
from kgb.methods import NoCandidate
from kgb.models.model import Model
from kgb.preflight import check_settings
from kgb.progress import Progress, summary_table
from kgb.tracking.baselines import BaselineBook, fingerprint, load_book
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import Event, RunFinished, RunStarted, TrialEnd
from kgb.tracking.follower import Opening
from kgb.tracking.log import EventLog
from kgb.tracking.projections import JobSummary, summarize, trial_outcomes
from kgb.trial import (
    BudgetExhausted,
    InfrastructureFailure,
    TrialContext,
    finish,
    machine_error,
    start,
)
from kgb.trial_order import longest_first

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
    settings = eval_settings(cfg.eval, chip)
    ident = identity(cfg, chip, settings)
    job = ident.job_id(cfg.source.name, ops)
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
    if chip.present and sum(o.finished for o in earlier.values()) < len(ops) * cfg.method.samples:
        start_engine(settings)  # while the specs, the event log, MLflow and the baselines get ready
    specs = {op: operators.load(op) for op in ops}
    todo, kept = [], set()
    for op, spec in specs.items():
        for sample in range(cfg.method.samples):
            key = ident.trial_key(op, spec.version, sample)
            if not (key in earlier and earlier[key].finished):  # an infrastructure failure is retried
                todo.append((spec, sample, key))
            else:
                kept.add(op)
    changed = changed_specs(log.events(), specs, kept)
    if changed:
        print(f"note: {len(changed)} operator(s) keep trials judged under an earlier spec.py of the same VERSION "
              f"({', '.join(changed[:5])}{', ...' if len(changed) > 5 else ''}); bump a spec's VERSION to judge it again")
    order = {op: i for i, op in enumerate(longest_first(ops, settings.device))}
    todo.sort(key=lambda item: order[item[0].id])  # so that the job does not end on a long trial alone
    started_at = time.perf_counter()
    log.append(RunStarted(
        job=job, method=cfg.method.name, model=cfg.model.name, source=cfg.source.name,
        chip=chip.name, config=config_dict(cfg), git_commit=git_commit(), packages=packages(),
        device=chips.device_name(), driver=driver_version(), n_ops=len(ops),
        specs={op: spec_record(s) for op, s in specs.items()},
        identity=ident.as_dict(), settings=ident.settings, sandbox=sandbox_level(),
    ))
    projection = Opening(lambda: open_projection(cfg), log.events, blobs) if cfg.tracking.mlflow else None
    # Timed jobs measure each case's baseline once per chip, for every job under this root.
    book = load_book(root, fingerprint(chips.device_name(), ident.settings, packages())) if settings.time_cases else None

    total = len(ops) * cfg.method.samples
    progress = Progress(total, f"job {job} on {chip.name}, judged under: {ident.settings}")
    progress.skipped_as_done(total - len(todo))
    project_lock = threading.Lock()

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

    def one_trial(item) -> None:
        spec, sample, key = item
        prior = earlier[key].events if key in earlier else []
        attempt = (earlier[key].attempts if key in earlier else 0) + 1
        t0 = start(log, job, key, spec, sample, attempt)
        end, reason = run_trial(method, chip, spec, settings, log, blobs, job, key, sample, model, prior, book)
        finish(log, job, key, end, reason, t0)
        events = log.events()
        progress.finished(log.outcome(key))  # folded as it was logged: no re-fold per trial
        with project_lock:
            project(events)

    pool = ThreadPoolExecutor(max_workers=trials_at_once(cfg.method.concurrency, settings.device))
    try:
        list(pool.map(one_trial, todo))
    except KeyboardInterrupt:  # Ctrl-C: start no other trial, and leave the running ones to the exit
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()

    log.append(RunFinished(job=job, wall_s=time.perf_counter() - started_at, trials_run=len(todo),
                           trials_skipped_as_done=total - len(todo)))
    log.close()
    events = log.events()
    project(events)
    outcomes = list(trial_outcomes(events).values())
    summary = summarize(outcomes, ident.settings)
    summary_table(outcomes, summary)
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


def run_trial(method, chip: Chip, spec, settings, log, blobs, job, key, sample, model, prior,
              baselines: BaselineBook | None = None) -> tuple[TrialEnd, str]:
    """Run the method on one operator; return how the trial ended and why."""
    from kgb.models import ModelCallFailed, ProviderUnavailable

    if not chip.present:
        return TrialEnd.SKIPPED, chip.reason
    ctx = TrialContext(
        problem=spec.problem(chip_notes=chip.notes, show_reference=True), spec=spec,
        settings=settings, log=log, blobs=blobs, job=job, key=key, sample=sample,
        model=None, prior=prior, baselines=baselines,
    )
    if model is not None:
        ctx.model = model.for_trial(ctx)  # its calls log themselves into this trial
    try:
        method.solve(ctx)
    except NoCandidate as e:
        return TrialEnd.NO_CANDIDATE, str(e)
    except BudgetExhausted as e:
        return TrialEnd.BUDGET, str(e)
    except (ProviderUnavailable, InfrastructureFailure) as e:  # no verdict on the method: retried
        print(f"  infrastructure failure on {spec.id} (a re-run retries it): {e}", file=sys.stderr)
        return TrialEnd.INFRA_ERROR, str(e)
    except ModelCallFailed as e:  # after its retries: it ends this trial, not the sweep
        print(f"  model call failed on {spec.id}: {e}", file=sys.stderr)
        return TrialEnd.METHOD_ERROR, f"model call failed: {e}"
    except Exception as e:  # noqa: BLE001 - a method bug ends its trial, not the sweep
        if machine_error(e):
            print(f"  infrastructure failure on {spec.id} (a re-run retries it): {e}", file=sys.stderr)
            return TrialEnd.INFRA_ERROR, f"{type(e).__name__}: {e}"
        print(f"  method error on {spec.id}: {type(e).__name__}: {e}", file=sys.stderr)
        return TrialEnd.METHOD_ERROR, f"{type(e).__name__}: {e}"
    if ctx.proposed == 0:
        return TrialEnd.NO_CANDIDATE, "the method proposed no candidate"
    return TrialEnd.COMPLETED, ""


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


def open_projection(cfg: Config):
    from kgb.tracking.mlflow_projection import MlflowProjection

    return MlflowProjection(cfg.tracking.tracking_uri(), cfg.tracking.experiment)
