"""A job's MLflow run deleted in MLflow's UI, then the job run again (session 50's user walk).

MLflow deletes the run alone: its trial runs stay live, their parent tag naming the deleted
run. The job's next run found no live job run and made a new one, and adopted the trial runs
where they hung, so the new job run had no child and the UI showed its trials under a run it
no longer lists. Now they are moved under the new job run; a trial run deleted with it is
made anew there.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from kgb.config import (
    ChipConfig,
    Config,
    EvalConfig,
    ExpertConfig,
    ModelConfig,
    SourceConfig,
    TrackingConfig,
)
from kgb.run import run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.log import read_events

pytestmark = pytest.mark.slow  # each judges its job on the CPU: some 25 s
OPS = ["aten::add", "aten::sub"]


def expert_job(root: Path) -> Config:
    return Config(method=ExpertConfig(concurrency=2), model=ModelConfig(), source=SourceConfig("aten"),
                  chip=ChipConfig(name="cpu", backend="cpu"), eval=EvalConfig(cases="smoke"),
                  tracking=TrackingConfig(root=str(root)), ops=OPS)


def live_runs(uri: str) -> tuple[str, dict[str, str]]:
    """The store's one live job run, and each live trial run's op by id, checking that every
    one of them hangs under that job run."""
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("kgb").experiment_id
    [job] = client.search_runs([experiment], "tags.`kgb.kind` = 'job'")
    trials = client.search_runs([experiment], "tags.`kgb.kind` = 'trial'")
    assert {t.data.tags["mlflow.parentRunId"] for t in trials} == {job.info.run_id}
    return job.info.run_id, {t.info.run_id: t.data.tags["kgb.op"] for t in trials}


def test_a_job_run_deleted_in_the_ui_comes_back_with_its_trials_under_it(tmp_path):
    from kgb.query import trial_rows

    root = tmp_path / "out"
    uri = f"sqlite:///{root / 'mlflow.db'}"
    assert run_job(expert_job(root)).correct == 2
    first, trials = live_runs(uri)
    assert sorted(trials.values()) == OPS

    MlflowClient(uri).delete_run(first)  # the job run alone, as the UI deletes it
    assert run_job(expert_job(root)).correct == 2  # judges nothing: both trials are kept
    second, now = live_runs(uri)
    assert second != first and now == trials  # the trial runs moved under it, not made again
    assert sorted(r.op for r in trial_rows(uri)) == OPS  # and the queries read the job whole

    # the job run and one trial's run deleted together: that trial's run is made anew
    gone = next(run_id for run_id, op in trials.items() if op == "aten::add")
    for run_id in (second, gone):
        MlflowClient(uri).delete_run(run_id)
    run_job(expert_job(root))
    third, now = live_runs(uri)
    assert third not in (first, second) and sorted(now.values()) == OPS and gone not in now
    assert sorted(r.op for r in trial_rows(uri)) == OPS


def test_a_store_that_is_not_sql_moves_the_trials_too(tmp_path, monkeypatch):
    """MLflow's public client (a tracking server in practice) takes the move a run at a time."""
    from kgb.tracking.mlflow_projection import MlflowProjection

    root = tmp_path / "out"
    run_job(dataclasses.replace(expert_job(root), tracking=TrackingConfig(root=str(root), mlflow=False)))
    [log] = root.glob("jobs/*/events.jsonl")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "files").as_uri()

    def project() -> None:  # a new projection, as the job's next run makes
        MlflowProjection(uri, "kgb", background=False).project(read_events(log), BlobStore(root / "blobs"))

    project()
    first, trials = live_runs(uri)
    MlflowClient(uri).delete_run(first)
    project()
    second, now = live_runs(uri)
    assert second != first and now == trials


def test_trial_runs_under_a_live_job_run_are_left_where_they_are(tmp_path, monkeypatch):
    """Where nothing was deleted, the job's next run moves nothing (and writes no tag)."""
    from kgb.tracking.mlflow_store import SqlRunWriter

    root = tmp_path / "out"
    run_job(expert_job(root))
    moved: list[str] = []
    real = SqlRunWriter.reparent
    monkeypatch.setattr(SqlRunWriter, "reparent", lambda self, ids, parent: (moved.extend(ids), real(self, ids, parent)))
    run_job(expert_job(root))
    assert moved == []
