"""Two campaigns in one store (session 50's user walk): jobs project into their config's MLflow
experiment (`tracking.experiment`, "one per campaign"), but every query read every experiment
of the store, mixing the campaigns in one leaderboard, and a rebuild put every job into one
experiment. Events are synthesised (tests/test_query_scope.py's Job) and projected into a
SQLite store as the jobs would, or written as their logs and rebuilt."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import pytest
from test_query_scope import Job

from kgb.query import StoreError, trial_runs
from kgb.query.__main__ import main
from kgb.tracking.blobs import BlobStore
from kgb.tracking.encoding import to_json
from kgb.tracking.events import RunStarted
from kgb.tracking.mlflow_projection import MlflowProjection

A, B = "campaign-a", "campaign-b"


def campaigns(events: list, *names: str) -> list:
    """The log with its runs' configs naming the experiments, one a run in order, as
    `tracking.experiment=NAME` does (RunStarted.config is the job's resolved config)."""
    runs = iter(names)
    return [dataclasses.replace(e, config={**e.config, "tracking": {"experiment": next(runs)}})
            if isinstance(e, RunStarted) else e for e in events]


def project_into(uri: str, blobs: BlobStore, experiment: str, *logs: list) -> None:
    """What a job with tracking.experiment=`experiment` projects."""
    projection = MlflowProjection(uri, experiment, background=False)
    for events in logs:
        projection.project(events, blobs)


def query(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()  # what an earlier command printed
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out, out.err


def models(csv_text: str) -> dict[str, dict[str, str]]:
    """The leaderboard's CSV rows by model: each job here has a model of its own."""
    return {r["model"]: r for r in csv.DictReader(io.StringIO(csv_text))}


@pytest.fixture(scope="module")
def two_campaigns(tmp_path_factory) -> str:
    """One store, two experiments: campaign A's job (model claude) solved softmax, campaign
    B's (model gpt) did not, and solved add too. Read only by the tests that share it."""
    root = tmp_path_factory.mktemp("two-campaigns")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    blobs = BlobStore(root / "blobs")
    project_into(uri, blobs, A, Job("a-job", blobs).run(["aten::softmax"], {"aten::softmax": True}))
    project_into(uri, blobs, B, Job("b-job", blobs, model="gpt").run(
        ["aten::softmax", "aten::add"], {"aten::softmax": False, "aten::add": True}))
    return uri


@pytest.fixture(params=["sql", "client"])
def path(request, monkeypatch) -> str:
    """The store read as SQLite (Python's sqlite3) or, as a tracking server is, through MLflow's client."""
    if request.param == "client":
        monkeypatch.setattr("kgb.query.store.sqlite_path", lambda uri: None)
    return request.param


def test_the_leaderboard_of_one_experiment_shows_only_that_campaigns_trials(two_campaigns, capsys, path):
    rc, out, err = query(capsys, "leaderboard", "--format", "csv", "--tracking-uri", two_campaigns, "--experiment", A)
    assert rc == 0 and err == ""
    assert set(models(out)) == {"claude"} and models(out)["claude"]["trials"] == "1"
    rc, out, err = query(capsys, "leaderboard", "--format", "csv", "--tracking-uri", two_campaigns, "--experiment", B)
    assert rc == 0 and set(models(out)) == {"gpt"} and models(out)["gpt"]["trials"] == "2"


def test_without_an_experiment_named_the_query_says_which_it_read_together(two_campaigns, capsys, path):
    rc, out, err = query(capsys, "leaderboard", "--format", "csv", "--tracking-uri", two_campaigns)
    assert rc == 0 and set(models(out)) == {"claude", "gpt"}  # as before: every experiment
    [note] = err.splitlines()
    assert note == f"note: read 2 experiments of the store together: {A}, {B} (--experiment NAME reads one)"
    # both named: read together, as asked, without a word
    rc, out, err = query(capsys, "leaderboard", "--format", "csv", "--tracking-uri", two_campaigns,
                         "--experiment", A, "--experiment", B)
    assert rc == 0 and set(models(out)) == {"claude", "gpt"} and err == ""


@pytest.mark.parametrize("command", [["leaderboard"], ["report", "--no-plots"], ["plots"], ["portability"],
                                     ["best", "--op", "aten::softmax", "--chip", "cpu"]])
def test_an_unknown_experiment_is_an_error_naming_those_the_store_has(two_campaigns, tmp_path, capsys, path, command):
    dest = ["--dest", str(tmp_path / "out")] if command[0] in ("report", "plots", "best") else []
    rc, out, err = query(capsys, *command, *dest, "--tracking-uri", two_campaigns, "--experiment", "campaign-c")
    assert rc == 1 and out == ""
    assert err == (f"error: no experiment 'campaign-c' in {two_campaigns}; its experiments: "
                   f"{A} (1 job), {B} (1 job), Default (no kgb job)\n")
    assert not (tmp_path / "out").exists()


def test_best_and_the_report_read_the_experiment_named(two_campaigns, tmp_path, capsys):
    """Campaign B judged softmax's kernel (the helper's `# aten::softmax`) wrong: read together,
    best refuses it; within campaign A it is A's correct kernel."""
    best = ["best", "--op", "aten::softmax", "--chip", "cpu", "--dest", str(tmp_path / "k"), "--tracking-uri", two_campaigns]
    rc, _, err = query(capsys, *best)
    assert rc == 1 and "note: read 2 experiments" in err and "failed in another" in err
    rc, out, err = query(capsys, *best, "--experiment", A)
    assert rc == 0 and err == "" and "model claude" in out
    rc, _, err = query(capsys, *best, "--experiment", B)
    assert rc == 1 and f"no correct kernel for aten::softmax on cpu among 1 trial(s) of it in experiment {B} of" in err

    rc, _, _ = query(capsys, "report", "--no-plots", "--dest", str(tmp_path / "r"), "--tracking-uri", two_campaigns,
                     "--experiment", B)
    assert rc == 0
    [row] = csv.DictReader(io.StringIO((tmp_path / "r" / "accuracy.csv").read_text()))
    assert (row["model"], row["operators"], row["correct"]) == ("gpt", "2", "1")
    assert f"3 trial(s) of MLflow experiment {B}." not in (tmp_path / "r" / "report.html").read_text()
    assert f"2 trial(s) of MLflow experiment {B}." in (tmp_path / "r" / "report.html").read_text()


def test_trial_runs_read_the_experiments_named(two_campaigns):
    assert {r.data.tags["kgb.job"] for r in trial_runs(two_campaigns)} == {"a-job", "b-job"}
    assert {r.data.tags["kgb.job"] for r in trial_runs(two_campaigns, experiments=[B])} == {"b-job"}
    with pytest.raises(StoreError, match=f"no experiment 'nope' in .*; its experiments: Default, {A}, {B}"):
        trial_runs(two_campaigns, experiments=["nope"])


# --- rebuild ------------------------------------------------------------------------------

def test_each_experiment_has_the_log_as_the_jobs_last_run_there_left_it(tmp_path):
    """A job run again under another experiment was projected into both: the first as the
    log stood when its run there ended, at the next run's start."""
    from kgb.tracking.rebuild import experiments_of

    blobs = BlobStore(tmp_path / "blobs")
    moved = Job("moved", blobs)
    moved.run(["aten::add"], {"aten::add": True})
    first = len(moved.events)
    events = campaigns(moved.run(["aten::add", "aten::mul"], {"aten::mul": True}), A, B)
    assert experiments_of(events) == {A: first, B: len(events)}
    assert experiments_of(campaigns(events, B, B)) == {B: len(events)}
    # A, B, then A again: A had the whole log when its last run ended
    again = campaigns(moved.run(["aten::add"], {}), A, B, A)
    assert experiments_of(again) == {A: len(again), B: len(events)}
    assert experiments_of(events[1:first]) == {}  # no run: nothing to project
    # a config that names no experiment (a log made by hand, a test's): the default's
    plain = Job("plain", blobs).run(["aten::add"], {})
    assert experiments_of(plain) == {"kgb": len(plain)}


def write_log(root: Path, events: list) -> None:
    path = root / "jobs" / events[0].job / "events.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(to_json(e)) + "\n" for e in events))


def test_a_rebuild_puts_each_job_back_into_its_own_experiment(tmp_path, capsys):
    from kgb.tracking.__main__ import main as tracking

    root = tmp_path / "outputs"
    blobs = BlobStore(root / "blobs")
    a = campaigns(Job("a-job", blobs).run(["aten::softmax"], {"aten::softmax": True}), A)
    b = campaigns(Job("b-job", blobs, model="gpt").run(["aten::add"], {"aten::add": False}), B)
    moved = Job("moved", blobs, model="moved")  # run in campaign A, then again in B, judging one more
    moved.run(["aten::add"], {"aten::add": True})
    first = len(moved.events)
    both = campaigns(moved.run(["aten::add", "aten::mul"], {"aten::mul": True}), A, B)
    for log in (a, b, both):
        write_log(root, log)

    live = f"sqlite:///{tmp_path / 'live.db'}"  # what the jobs projected as they ran
    project_into(live, blobs, A, a, both[:first])
    project_into(live, blobs, B, b, both)
    rebuilt = f"sqlite:///{tmp_path / 'rebuilt.db'}"
    capsys.readouterr()
    assert tracking(["rebuild", str(root), "--tracking-uri", rebuilt]) == 0
    assert f"moved (experiments {A}, {B})" in capsys.readouterr().out

    for experiment, expected in ((A, {"claude": "1", "moved": "1"}), (B, {"gpt": "1", "moved": "2"})):
        board = ["leaderboard", "--format", "csv", "--experiment", experiment, "--tracking-uri"]
        rc, out, err = query(capsys, *board, rebuilt)
        assert rc == 0 and err == ""
        assert {model: row["trials"] for model, row in models(out).items()} == expected
        assert query(capsys, *board, live)[1] == out  # as the jobs left it

    # --experiment NAME: every job into it, whole (the rebuild's only way until session 50)
    merged = f"sqlite:///{tmp_path / 'merged.db'}"
    assert tracking(["rebuild", str(root), "--tracking-uri", merged, "--experiment", "all"]) == 0
    rc, out, _ = query(capsys, "leaderboard", "--format", "csv", "--tracking-uri", merged)
    assert {model: row["trials"] for model, row in models(out).items()} == {"claude": "1", "gpt": "1", "moved": "2"}
    assert query(capsys, "leaderboard", "--tracking-uri", merged, "--experiment", A)[0] == 1
