"""The MLflow read model: a parent run per job, a child run per finished trial.

`project(events)` may be called after every trial with the job's whole log: it folds only
the events it has not seen (kgb.tracking.projections.TrialFold) and writes only the
trials finished since. Each new trial run is created whole in one write
(kgb.tracking.mlflow_store); the job's run keeps the trials table that queries read
(kgb.tracking.summary), rewritten as trials finish, and its aggregate metrics, logged
when the job starts and ends and at most once a minute in between.

Idempotent: the trial runs of a job are listed once per process; a trial already there
complete is not written again, a half-written one (left by a crash of a non-SQL store's
client) is deleted and redone. A run deleted in MLflow's UI is absent: a job's run is made
anew, with the trial runs still live moved under it. The whole store can be rebuilt from
the event logs alone.
"""

from __future__ import annotations

import fcntl
import json
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kgb.evaluate.verdict import TimedBy
from kgb.method_params import method_params
from kgb.tracking.artifacts import ArtifactWriter, trial_files
from kgb.tracking.blobs import BlobStore
from kgb.tracking.encoding import to_json
from kgb.tracking.events import Event, RunFinished, RunStarted, TrialFinished
from kgb.tracking.follower import Follower
from kgb.tracking.mlflow_store import PARENT, NewRun, search_all, sqlite_path, writer_for
from kgb.tracking.projections import TrialFold, TrialOutcome, run_started, summarize
from kgb.tracking.store_making import made_whole
from kgb.tracking.summary import TABLE_NAME, JobInfo, header, line, trial_row

TRIAL_METRICS = (
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
    "reasoning_tokens", "total_tokens", "cost_usd",
)
METRICS_EVERY_S = 60.0  # a live job's aggregate metrics: one history step a minute at most
TAG_CHARS = 5000
# MLflow 3 opens an experiment of this kind on its runs ("training runs"), not on GenAI traces
EXPERIMENT_KIND = ("mlflow.experimentKind", "custom_model_development")


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> dict[str, str]:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = json.dumps(value) if isinstance(value, list) else str(value)
    return out


@dataclass
class JobState:
    """What this process knows of one job's projection."""

    info: JobInfo
    parent: str
    artifact_uri: str
    fold: TrialFold = field(default_factory=TrialFold)
    folded: int = 0  # events of the log folded so far
    last_seq: int = -1
    lines: dict[str, str] = field(default_factory=dict)  # trial key -> its line of the trials table
    metrics: dict[str, float] = field(default_factory=dict)  # as last logged on the job run
    metrics_at: float = 0.0
    status: str = ""
    wall_s: float = 0.0  # the job's runs' seconds, launch to end, summed (their RunFinished events folded)


@contextmanager
def _made_alone(uri: str) -> Iterator[None]:
    """An SQLite store made (its tables migrated) and its experiment found by one process at a
    time: two jobs started at once into a new `tracking.root` (a multirun on a local cluster,
    two terminals) raced through MLflow's migrations, and one of them died of it ("Online
    migration expected to match one row", "duplicate column name"; session 44). A new store
    is made under another name and renamed into place once whole, so that a process ended
    among the migrations (Ctrl-C) leaves none half-made (kgb.tracking.store_making). A
    server store makes its own tables once, when it starts."""
    store = sqlite_path(uri)
    if store is None:
        yield
        return
    lock = store.with_name(store.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)  # held until the file closes
        made_whole(store)
        yield


class MlflowProjection:
    """Writes job and trial runs into one MLflow tracking store."""

    def __init__(self, uri: str, experiment: str, background: bool = True):
        from mlflow.tracking import MlflowClient

        # MLflow's notes (a new store's tables made) would land among the job's progress lines
        logging.getLogger("mlflow").setLevel(logging.WARNING)
        with _made_alone(uri):
            self.client = MlflowClient(tracking_uri=uri)
            self.uri = uri
            self.experiment_id = self._experiment(experiment, uri)
        self.writer = writer_for(uri, self.client)
        # the agent view folds agent events (an extension, imported here rather than at the
        # top: kgb.agents imports kgb.tracking); now, so a live job's first trial does not wait for it
        from kgb.agents.projection import agent_view

        self._agent_view = agent_view
        self.artifacts = ArtifactWriter(self.client)
        self._lock = threading.RLock()
        self._jobs: dict[str, JobState] = {}
        # a job's later calls go to the follower; its first (which opens the job run) and
        # its last (the log ends with RunFinished) are made at once, after what is pending
        self._follower = Follower(self._project_now) if background else None

    def runs_page(self, server: str = "http://127.0.0.1:5000") -> str:
        """The experiment's runs in `mlflow ui`: its training view, where MLflow 3 would
        otherwise open on GenAI traces."""
        return f"{server}/#/experiments/{self.experiment_id}/runs?workflowType=machine_learning"

    def _experiment(self, name: str, uri: str) -> str:
        """The experiment's id, created and tagged if need be. Jobs on several hosts start at
        once against one server: whichever creates or tags it first, the others find it."""
        from mlflow.exceptions import MlflowException

        for _ in range(3):
            found = self.client.get_experiment_by_name(name)
            try:
                if found is None:
                    return self.client.create_experiment(name, artifact_location=self._artifact_root(uri),
                                                         tags=dict([EXPERIMENT_KIND]))
                if found.tags.get(EXPERIMENT_KIND[0]) != EXPERIMENT_KIND[1]:
                    self.client.set_experiment_tag(found.experiment_id, *EXPERIMENT_KIND)
                return found.experiment_id
            except MlflowException:  # another job created or tagged it meanwhile: look again
                continue
        raise RuntimeError(f"MLflow experiment {name!r} could not be created or read at {uri}")

    @staticmethod
    def _artifact_root(uri: str) -> str | None:
        """Keep artifacts beside a SQLite store instead of in the current directory."""
        store = sqlite_path(uri)
        return (store.parent / "mlartifacts").resolve().as_uri() if store is not None else None

    def project(self, events: Sequence[Event], blobs: BlobStore) -> str | None:
        """Bring the store up to date with one job's log; return the parent run id. A live
        job's calls between its first and its last return before the store is written."""
        if not events:
            return None
        state = self._jobs.get(events[0].job)
        if self._follower is not None:
            if state is not None and not isinstance(events[-1], RunFinished):
                self._follower.submit(state.info.job, events, blobs)
                return state.parent
            self._follower.drain()
        return self._project_now(events, blobs)

    def _project_now(self, events: Sequence[Event], blobs: BlobStore) -> str | None:
        with self._lock:
            state = self._jobs.get(events[0].job)
            if state is None:
                started = run_started(events)
                if started is None:
                    return None
                state = self._jobs[started.job] = self._open_job(started)
            self._project(state, events, blobs)
            return state.parent

    # --- jobs ------------------------------------------------------------------
    def _open_job(self, started: RunStarted) -> JobState:
        """The job's run, found or created, and the trial runs it already has."""
        query = f"tags.`kgb.kind` = 'job' and tags.`kgb.job` = '{started.job}'"
        found = search_all(self.client, [self.experiment_id], query)
        # the method's configuration, where it is not the defaults, keeps the job's rows apart
        # from other configurations of the method in every query (a schema-1 log has no identity)
        params = method_params(started.identity.get("method") or {})
        run = found[0] if found else self._create_job_run(started, params)
        info = JobInfo(started.job, started.method, started.model, started.source, started.chip, started.settings,
                       method_params=params)
        return JobState(info, run.info.run_id, run.info.artifact_uri, metrics=dict(run.data.metrics),
                        status=run.info.status)

    def _create_job_run(self, started: RunStarted, method_params: str) -> Any:
        from mlflow.entities import Param

        tags = {
            "kgb.kind": "job", "kgb.job": started.job, "kgb.method": started.method,
            "kgb.model": started.model, "kgb.source": started.source, "kgb.chip": started.chip,
            "kgb.device": started.device, "kgb.git_commit": started.git_commit or "",
            "kgb.sandbox": started.sandbox or "unrecorded", "kgb.settings": started.settings,
        }
        # the method as the queries label it, and the job id's digest: two users' folders, two
        # ops= lists or two timeouts made runs of one name in the UI's list (session 46's user walk)
        label = f"{started.method} {method_params}" if method_params else started.method
        name = f"{label}/{started.model}/{started.source}/{started.chip} {started.job.rsplit('-', 1)[-1]}"
        run = self.client.create_run(self.experiment_id, run_name=name, tags=tags, start_time=int(started.ts * 1000))
        params = _flatten("", started.config, {})
        # the config says what was asked (chip.name=auto); these say what it resolved to
        params.update({"n_ops": str(started.n_ops), "chip.resolved": started.chip, "device": started.device})
        items = [Param(k, v[:6000]) for k, v in sorted(params.items())]
        for i in range(0, len(items), 100):
            self.client.log_batch(run.info.run_id, params=items[i : i + 100])
        self.client.log_text(run.info.run_id, json.dumps(to_json(started), indent=1), "run_started.json")
        return self.client.get_run(run.info.run_id)

    def _project(self, state: JobState, events: Sequence[Event], blobs: BlobStore) -> None:
        first = state.folded == 0
        if not first and len(events) <= state.folded and events[-1].seq <= state.last_seq:
            return  # an older copy of the log than the one already projected
        if state.folded > len(events) or (state.folded and events[state.folded - 1].seq != state.last_seq):
            state.fold, state.folded, state.wall_s = TrialFold(), 0, 0.0  # not the log folded so far: start again
        new = events[state.folded:]
        state.wall_s += sum(e.wall_s for e in new if isinstance(e, RunFinished))
        finished: list[TrialOutcome] = []
        for e in new:
            t = state.fold.add(e)
            if isinstance(e, TrialFinished) and t is not None and t.finished:  # infra_error: no result
                finished.append(t)
        state.folded, state.last_seq = len(events), events[-1].seq
        if first:
            finished = [t for t in state.fold.trials.values() if t.finished]
            self._adopt_existing(state, finished)
        todo = [t for t in finished if t.key not in state.lines]
        if todo:
            self._create_trial_runs(state, todo, blobs)
        # The table holds the latest run's trials, as the job's metrics count them: not those of
        # an operator since removed from the source, or of a file since edited (queries read it).
        # Made only where the whole table is written, not at every trial's projection.
        whole = lambda: header(state.info) + "".join(state.lines[t.key] for t in state.fold.current()
                                                     if t.key in state.lines)
        if first or any(isinstance(e, RunStarted) for e in new):  # first sight, or a new run: written anew
            self.artifacts.replace(state.parent, state.artifact_uri, TABLE_NAME, whole())
        elif todo:  # then only the new trials' lines are added
            text = "".join(state.lines[t.key] for t in todo)
            self.artifacts.append(state.parent, state.artifact_uri, TABLE_NAME, text, whole)
        run = latest_run_event(new)
        ended = isinstance(run, RunFinished)
        if first or ended or time.monotonic() - state.metrics_at >= METRICS_EVERY_S:
            self._log_job_metrics(state, events[-1].ts)
        # a run's end is set though the status stays FINISHED: a resumed run projected whole (quick,
        # or by a rebuild) kept the earlier run's end_time, which says which job ran last (kgb.query.scope)
        if run is not None and (run_status(run) != state.status or ended):
            self._set_status(state, run)

    def _set_status(self, state: JobState, run: RunStarted | RunFinished) -> None:
        """The job run's status as its latest run left it: FINISHED, KILLED where Ctrl-C
        stopped it (it once stayed RUNNING, its metrics up to a minute old, until the job ran
        again), or RUNNING again where a later run resumed it."""
        status = run_status(run)
        if isinstance(run, RunFinished):
            self.client.set_terminated(state.parent, status, end_time=int(run.ts * 1000))
        else:
            self.client.update_run(state.parent, status=status)
        state.status = status

    def _adopt_existing(self, state: JobState, finished: list[TrialOutcome]) -> None:
        """Take the complete trial runs already in the store, hung under the job's run; delete
        half-written ones and duplicates, so each trial is projected exactly once.

        A trial run may hang under another job run than the one found: the job's run was
        deleted in MLflow's UI (or purged by `mlflow gc`), which leaves its trial runs live,
        and `_open_job`, which finds no live job run, makes a new one. Until session 50 those
        trials were adopted where they hung, so the new job run had no child and the UI
        showed the trials under a run it no longer lists. They are moved under the job's run:
        their results are whole, and moving them is one write where making them anew is every
        artifact again."""
        outcomes = {t.key: t for t in finished}
        elsewhere: list[str] = []
        for key, runs in self.writer.trial_runs(self.experiment_id, state.info.job).items():
            complete = [r for r in runs if r.complete]
            keep = complete[0] if complete and key in outcomes else None
            for r in runs:
                if r is not keep:
                    self.client.delete_run(r.run_id)
            if keep is not None:
                state.lines[key] = line(trial_row(state.info, outcomes[key], keep.run_id))
                if keep.parent != state.parent:
                    elsewhere.append(keep.run_id)
        self.writer.reparent(elsewhere, state.parent)

    def _log_job_metrics(self, state: JobState, ts: float) -> None:
        from mlflow.entities import Metric

        summary = summarize(state.fold.current(), state.info.settings)  # the latest run's trials
        metrics = summary.metrics() | ({"wall_s": state.wall_s} if state.wall_s else {})
        # only changed values: a re-run that adds no trial must not add a history step
        changed = {k: float(v) for k, v in metrics.items() if state.metrics.get(k) != float(v)}
        if changed:
            self.client.log_batch(state.parent, metrics=[Metric(k, v, int(ts * 1000), 0) for k, v in changed.items()])
            state.metrics.update(changed)
        state.metrics_at = time.monotonic()

    # --- trials ----------------------------------------------------------------
    def _create_trial_runs(self, state: JobState, trials: list[TrialOutcome], blobs: BlobStore) -> None:
        runs = [self._trial_run(state, t, blobs) for t in trials]
        self.writer.create(self.experiment_id, runs)
        for t, run in zip(trials, runs, strict=True):
            state.lines[t.key] = line(trial_row(state.info, t, run.run_id))

    def _trial_run(self, state: JobState, t: TrialOutcome, blobs: BlobStore) -> NewRun:
        info = state.info
        tags = {
            PARENT: state.parent, "kgb.kind": "trial", "kgb.job": info.job,
            "kgb.trial": t.key, "kgb.method": info.method, "kgb.model": info.model,
            "kgb.source": t.op.split("::")[0], "kgb.chip": info.chip, "kgb.op": t.op,
            "kgb.status": t.status.value, "kgb.sample": str(t.sample),
        }
        if t.why:
            tags["kgb.reason"] = t.why[:TAG_CHARS]
        if clock := timed_by(t):
            tags["kgb.timed_by"] = clock
        if firsts := first_call_cases(t):
            tags["kgb.first_call"] = ",".join(firsts)[:TAG_CHARS]
        if t.best is not None and t.best.verdict is not None and t.best.verdict.compile_cache:
            tags["kgb.compile_cache"] = str(t.best.verdict.compile_cache)  # hit, miss or off
        metrics, files, history = trial_metrics(t), trial_files(t, blobs), []
        view = self._agent_view(t.events)  # an agent trial: its metrics, checks' trajectory, transcript
        if view is not None:
            metrics.update(view.metrics())
            history = list(view.history())
            files.update(view.artifacts(blobs))
        return NewRun(
            name=t.op if t.sample == 0 else f"{t.op}#{t.sample}",
            start_ms=int(t.started_at * 1000), end_ms=int(t.finished_at * 1000),
            tags=tags, metrics=metrics, files=files, history=history,
        )


def latest_run_event(events: Sequence[Event]) -> RunStarted | RunFinished | None:
    """The latest event of `events` that starts or ends a run of the job, not merely the
    last: trials that Ctrl-C left running log their ends after their run's."""
    for e in reversed(events):
        if isinstance(e, RunStarted | RunFinished):
            return e
    return None


def run_status(run: RunStarted | RunFinished) -> str:
    """The MLflow status a job's run takes from the event that started or ended it."""
    if isinstance(run, RunStarted):
        return "RUNNING"
    return "KILLED" if run.interrupted else "FINISHED"


def timed_by(t: TrialOutcome) -> str | None:
    """Whose clock timed the best candidate's cases: "judge" (its replay), "candidate" (the
    candidate process's own, which a hostile candidate can patch), "mixed", or None."""
    best = t.best
    if best is None or best.verdict is None:
        return None
    # a case timed by its first call was timed by the judge's replay too (`first_call_cases`)
    clocks = {str(TimedBy.JUDGE if c.timed_by == TimedBy.FIRST_CALL else c.timed_by)
              for c in best.verdict.cases if c.latency_us and c.timed_by}
    return None if not clocks else clocks.pop() if len(clocks) == 1 else "mixed"


def first_call_cases(t: TrialOutcome) -> list[str]:
    """The best candidate's cases timed by the replay's first call, which took far longer than
    the calls after it (judge v29-v30, kgb.evaluate.first_call)."""
    if t.best is None or t.best.verdict is None:
        return []
    return [c.name for c in t.best.verdict.cases if c.timed_by == TimedBy.FIRST_CALL]


def trial_metrics(t: TrialOutcome) -> dict[str, float]:
    """A trial run's metrics. Its tokens and cost are what its calls spent; a replayed call's
    tokens (model=replay) are `replayed_tokens`, as on the job's run (JobSummary.metrics)."""
    usage = t.usage
    m: dict[str, float] = {name: getattr(usage, name) for name in TRIAL_METRICS}
    if t.replayed.total_tokens:
        m["replayed_tokens"] = t.replayed.total_tokens
    m.update(correct=float(t.correct), attempts=len(t.candidates), wall_s=t.wall_s, model_calls=len(t.calls))
    best = t.best
    if t.correct and best is not None and best.verdict is not None:
        for name in ("speedup", "latency_us", "baseline_us"):
            value = getattr(best.verdict, name)
            if value is not None:
                m[name] = value
    return m
