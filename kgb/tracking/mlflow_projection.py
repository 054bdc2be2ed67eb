"""The MLflow read model: a parent run per job, a child run per finished trial.

Idempotent: runs are found by their `kgb.*` tags and never created twice; a child run is
marked `kgb.complete` only after all its data is logged, so one cut short by a crash is
deleted and redone. The whole store can be rebuilt from the event logs alone.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import Event, RunFinished, RunStarted, to_json
from kgb.tracking.projections import TrialOutcome, run_started, summarize, trial_outcomes

TRIAL_METRICS = (
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
    "reasoning_tokens", "total_tokens", "cost_usd",
)


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> dict[str, str]:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = json.dumps(value) if isinstance(value, list) else str(value)
    return out


def search_all(client: Any, experiment_ids: list[str], query: str) -> list[Any]:
    """Every run matching `query`, all pages (a job of 210 operators x 5 samples has more
    trials than one page holds)."""
    runs: list[Any] = []
    token = None
    while True:
        page = client.search_runs(experiment_ids, filter_string=query, max_results=1000, page_token=token)
        runs.extend(page)
        token = page.token
        if not token:
            return runs


class MlflowProjection:
    """Writes job and trial runs into one MLflow tracking store."""

    def __init__(self, uri: str, experiment: str):
        from mlflow.tracking import MlflowClient

        self.client = MlflowClient(tracking_uri=uri)
        self.uri = uri
        found = self.client.get_experiment_by_name(experiment)
        if found is not None:
            self.experiment_id = found.experiment_id
        else:
            self.experiment_id = self.client.create_experiment(experiment, artifact_location=self._artifact_root(uri))
        self._lock = threading.RLock()
        # per job: its parent run and the trials projected complete, found once by search
        # and then kept up to date here, so a trial's projection does not search them all
        self._parents: dict[str, str] = {}
        self._complete: dict[str, set[str]] = {}

    @staticmethod
    def _artifact_root(uri: str) -> str | None:
        """Keep artifacts beside a SQLite store instead of in the current directory."""
        if uri.startswith("sqlite:///"):
            return (Path(uri.removeprefix("sqlite:///")).parent / "mlartifacts").resolve().as_uri()
        return None

    def _find(self, **tags: str) -> list[Any]:
        query = " and ".join(f"tags.`{k}` = '{v}'" for k, v in tags.items())
        return search_all(self.client, [self.experiment_id], query)

    # --- jobs ------------------------------------------------------------------
    def job_run(self, started: RunStarted) -> str:
        """The parent run of a job, created on first sight."""
        with self._lock:
            if started.job in self._parents:
                return self._parents[started.job]
            runs = self._find(**{"kgb.kind": "job", "kgb.job": started.job})
            if runs:
                self._parents[started.job] = runs[0].info.run_id
                return runs[0].info.run_id
            tags = {
                "kgb.kind": "job", "kgb.job": started.job, "kgb.method": started.method,
                "kgb.model": started.model, "kgb.source": started.source, "kgb.chip": started.chip,
                "kgb.device": started.device, "kgb.git_commit": started.git_commit or "",
            }
            name = f"{started.method}/{started.model}/{started.source}/{started.chip}"
            run = self.client.create_run(self.experiment_id, run_name=name, tags=tags)
            params = _flatten("", started.config, {})
            params["n_ops"] = str(started.n_ops)
            from mlflow.entities import Param

            items = [Param(k, v[:6000]) for k, v in sorted(params.items())]
            for i in range(0, len(items), 100):
                self.client.log_batch(run.info.run_id, params=items[i : i + 100])
            self.client.log_text(run.info.run_id, json.dumps(to_json(started), indent=1), "run_started.json")
            self._parents[started.job] = run.info.run_id
            return run.info.run_id

    def project(self, events: list[Event], blobs: BlobStore) -> str | None:
        """Bring the store up to date with one job's log; return the parent run id."""
        started = run_started(events)
        if started is None:
            return None
        with self._lock:
            return self._project(started, events, blobs)

    def _project(self, started: RunStarted, events: list[Event], blobs: BlobStore) -> str:
        parent = self.job_run(started)
        outcomes = trial_outcomes(events)
        done = self._complete.get(started.job)
        if done is None:
            runs = self._find(**{"kgb.kind": "trial", "kgb.job": started.job})
            done = self._complete[started.job] = {r.data.tags["kgb.trial"] for r in runs if r.data.tags.get("kgb.complete") == "1"}
        for outcome in outcomes.values():
            if outcome.finished and outcome.key not in done:
                self.trial_run(parent, started, outcome, blobs)
                done.add(outcome.key)
        self._update_job(parent, events, list(outcomes.values()))
        return parent

    def _update_job(self, parent: str, events: list[Event], outcomes: list[TrialOutcome]) -> None:
        from mlflow.entities import Metric

        last_seq = str(events[-1].seq)
        run = self.client.get_run(parent)
        if run.data.tags.get("kgb.projected_seq") == last_seq:
            return  # nothing new since the last projection
        summary = summarize(outcomes)
        # only changed values: a re-run that adds no trial must not add a history step
        metrics = [Metric(k, float(v), int(events[-1].ts * 1000), 0) for k, v in summary.metrics().items()
                   if run.data.metrics.get(k) != float(v)]
        if metrics:
            self.client.log_batch(parent, metrics=metrics)
        self.client.set_tag(parent, "kgb.projected_seq", last_seq)
        finished = isinstance(events[-1], RunFinished)
        self.client.update_run(parent, status="FINISHED" if finished else "RUNNING")

    # --- trials ----------------------------------------------------------------
    def trial_run(self, parent: str, started: RunStarted, t: TrialOutcome, blobs: BlobStore) -> str:
        """Create the child run of one finished trial (replacing a half-written one)."""
        from mlflow.entities import Metric

        with self._lock:
            for stale in self._find(**{"kgb.kind": "trial", "kgb.trial": t.key, "kgb.job": started.job}):
                self.client.delete_run(stale.info.run_id)
            tags = {
                "mlflow.parentRunId": parent, "kgb.kind": "trial", "kgb.job": started.job,
                "kgb.trial": t.key, "kgb.method": started.method, "kgb.model": started.model,
                "kgb.source": t.op.split("::")[0], "kgb.chip": started.chip, "kgb.op": t.op,
                "kgb.status": t.status.value, "kgb.sample": str(t.sample),
            }
            if t.reason:
                tags["kgb.reason"] = t.reason[:5000]
            name = t.op if t.sample == 0 else f"{t.op}#{t.sample}"
            run_id = self.client.create_run(self.experiment_id, run_name=name, tags=tags).info.run_id
            ts = int((t.events[-1].ts if t.events else 0) * 1000)
            values = self._trial_metrics(t)
            self.client.log_batch(run_id, metrics=[Metric(k, float(v), ts, 0) for k, v in values.items()])
            self._trial_artifacts(run_id, t, blobs)
            self._agent(run_id, t, blobs, ts)
            self.client.set_tag(run_id, "kgb.complete", "1")
            self.client.update_run(run_id, status="FINISHED")
            return run_id

    @staticmethod
    def _trial_metrics(t: TrialOutcome) -> dict[str, float]:
        usage = t.usage
        m: dict[str, float] = {name: getattr(usage, name) for name in TRIAL_METRICS}
        m.update(correct=float(t.correct), attempts=len(t.candidates), wall_s=t.wall_s, model_calls=len(t.calls))
        best = t.best
        if t.correct and best is not None and best.verdict is not None:
            for name in ("speedup", "latency_us", "baseline_us"):
                value = getattr(best.verdict, name)
                if value is not None:
                    m[name] = value
        return m

    def _agent(self, run_id: str, t: TrialOutcome, blobs: BlobStore, ts: int) -> None:
        """An agent trial's metrics, its checks' trajectory and its transcript (kgb/agents/projection.py)."""
        from mlflow.entities import Metric

        from kgb.agents.projection import agent_view

        view = agent_view(t.events)
        if view is None:
            return
        metrics = [Metric(k, float(v), ts, 0) for k, v in view.metrics().items()]
        self.client.log_batch(run_id, metrics=metrics + [Metric(k, v, ts, step) for k, v, step in view.history()])
        for path, text in view.artifacts(blobs).items():
            self.client.log_text(run_id, text, path)

    def _trial_artifacts(self, run_id: str, t: TrialOutcome, blobs: BlobStore) -> None:
        log = self.client.log_text
        best = t.best
        if best is not None:
            log(run_id, blobs.get(best.source_blob), "kernel.py")
            if best.verdict is not None:
                log(run_id, json.dumps(to_json(best.verdict), indent=1), "verdict.json")
        for c in t.candidates:
            log(run_id, blobs.get(c.source_blob), f"candidates/{c.id}.py")
            if c.verdict is not None:
                log(run_id, json.dumps(to_json(c.verdict), indent=1), f"candidates/{c.id}.verdict.json")
            if c.logs_blob:
                log(run_id, blobs.get(c.logs_blob), f"candidates/{c.id}.log")
        for i, call in enumerate(t.calls, 1):
            log(run_id, blobs.get(call.request_blob), f"calls/{i:03d}-prompt.json")
            if call.response_blob:
                log(run_id, blobs.get(call.response_blob), f"calls/{i:03d}-completion.txt")
        log(run_id, "".join(json.dumps(to_json(e)) + "\n" for e in t.events), "events.jsonl")
