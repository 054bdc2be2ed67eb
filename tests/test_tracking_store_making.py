"""A new SQLite store cut short while MLflow makes it (Ctrl-C in a job's first seconds).

MLflow makes a new store's tables by running its schema migrations, some 1,700 SQL
statements over 1-2 s, not in one transaction. `python run.py` makes the store in a
background thread, and on Ctrl-C the job exits at once (os._exit): a cut there left a
half-made mlflow.db, after which every job's projection and every query of the store
failed ("table _alembic_tmp_experiments already exists", "duplicate column name",
"Detected out-of-date database schema"), until the user deleted the file (session 47's
user walk; 10 of 20 Ctrl-Cs sent in that window left one).
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from kgb.evaluate import Status
from kgb.evaluate.verdict import Verdict
from kgb.query.store import Store, StoreError
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateEvaluated,
    CandidateProposed,
    Event,
    RunFinished,
    RunStarted,
    TrialEnd,
    TrialFinished,
    TrialStarted,
)
from kgb.tracking.mlflow_projection import MlflowProjection
from kgb.tracking.store_making import ASIDE, MAKING

# The process that makes the store ends (os._exit, as run.py's Ctrl-C does) at its CUT-th
# SQL statement: in the initial tables, in alembic's table copies, in the last migrations.
# Each of these cuts left a store that MLflow 3.17 no longer opened.
CUT = """
import os, sys
import sqlalchemy
from sqlalchemy import event

statements = 0

@event.listens_for(sqlalchemy.engine.Engine, "before_cursor_execute")
def cut(*args):
    global statements
    statements += 1
    if statements == int(sys.argv[2]):
        os._exit(130)

if sys.argv[3] == "kgb":
    from kgb.tracking.mlflow_projection import MlflowProjection
    MlflowProjection(sys.argv[1], "kgb", background=False)
else:  # MLflow's own client, as `mlflow ui` or a kgb before session 47 made a store
    from mlflow.tracking import MlflowClient
    MlflowClient(sys.argv[1]).search_experiments()
print("made in", statements, "statements")
"""
CUTS = (800, 1060, 1660)
# A process of its own opens a store that this one has opened: MLflow keeps a store per URI
OPEN = "import sys; from kgb.tracking.mlflow_projection import MlflowProjection as P; P(sys.argv[1], 'kgb', background=False)"


def cut_short(uris: list[str], cuts: tuple[int, ...], maker: str) -> None:
    """Make each store in a process of its own (at once: each takes seconds), ended at its cut.
    Each has a cache of its own, empty: kgb's cut falls among the migrations that make the
    cache's pristine store, from which kgb copies every new store (kgb.tracking.store_making)."""
    children = [subprocess.Popen([sys.executable, "-c", CUT, uri, str(n), maker], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True,
                                 env={**os.environ, "XDG_CACHE_HOME": str(Path(uri.removeprefix("sqlite:///")).parent / "cache")})
                for uri, n in zip(uris, cuts, strict=True)]
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 130, f"the store was made before its cut ({out}{err[-2000:]})"


def job_log(blobs: BlobStore) -> list[Event]:
    """One job of one correct trial, ended."""
    trial = dict(job="j", trial="t")
    events = [
        RunStarted(job="j", method="expert", model="none", source="aten", chip="cpu", config={}, git_commit=None,
                   packages={}, device="cpu", driver=None, specs={}, n_ops=1),
        TrialStarted(**trial, op="aten::add", spec_version=1, sample=0),
        CandidateProposed(**trial, candidate="c1", source_blob=blobs.put("def add(): ...")),
        CandidateEvaluated(**trial, candidate="c1", verdict=Verdict(Status.CORRECT, "correct")),
        TrialFinished(**trial, end=TrialEnd.COMPLETED),
        RunFinished(job="j", wall_s=1.0, trials_run=1, trials_skipped_as_done=0),
    ]
    return [dataclasses.replace(e, seq=i, ts=1000.0 + i) for i, e in enumerate(events)]


def trial_runs(uri: str) -> int:
    client = MlflowClient(uri)
    return len(client.search_runs([client.get_experiment_by_name("kgb").experiment_id], "tags.`kgb.kind` = 'trial'"))


def test_a_store_whose_making_was_cut_short_opens_and_takes_the_jobs_runs(tmp_path, monkeypatch):
    uris = [f"sqlite:///{tmp_path / str(n) / 'mlflow.db'}" for n in CUTS]
    for uri in uris:
        Path(uri.removeprefix("sqlite:///")).parent.mkdir()
    cut_short(uris, CUTS, "kgb")
    blobs = BlobStore(tmp_path / "blobs")
    for uri in uris:  # the next run of the job, or a rebuild, with the cache its making left
        folder = Path(uri.removeprefix("sqlite:///")).parent
        monkeypatch.setenv("XDG_CACHE_HOME", str(folder / "cache"))
        assert [p.name for p in (folder / "cache" / "kgb" / "mlflow-stores").iterdir()] != []  # the cut making's
        MlflowProjection(uri, "kgb", background=False).project(job_log(blobs), blobs)
        assert trial_runs(uri) == 1
        left = [p.name for p in folder.iterdir()] + [p.name for p in (folder / "cache" / "kgb" / "mlflow-stores").iterdir()]
        assert "mlflow.db" in left and not [name for name in left if MAKING in name or ASIDE in name]


def test_a_new_store_is_a_copy_of_the_caches_and_names_its_own_artifacts(tmp_path, monkeypatch):
    """MLflow's migrations run once per MLflow version, into the user's cache; each new store
    after that is a copy, which MLflow opens as its own: its experiment's artifacts lie beside
    it, not beside the cache's store. Where the cache cannot be written, stores are migrated."""
    import sqlalchemy
    from sqlalchemy import event

    statements = []

    def count(conn, cursor, statement, *rest):
        statements.append(statement)

    event.listen(sqlalchemy.engine.Engine, "before_cursor_execute", count)
    try:
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        made = {}
        for name in ("first", "second"):
            statements.clear()
            blobs = BlobStore(tmp_path / name / "blobs")
            MlflowProjection(f"sqlite:///{tmp_path / name / 'mlflow.db'}", "kgb", background=False).project(job_log(blobs), blobs)
            made[name] = sum(1 for s in statements if s.lstrip().upper().startswith(("CREATE", "ALTER")))
        assert made["first"] > 100 and made["second"] == 0  # the cache's store migrated once, then copied
        for name in ("first", "second"):
            uri = f"sqlite:///{tmp_path / name / 'mlflow.db'}"
            assert trial_runs(uri) == 1
            location = MlflowClient(uri).get_experiment_by_name("kgb").artifact_location
            assert str(tmp_path / name) in location and "cache" not in location
        (tmp_path / "readonly").mkdir()
        (tmp_path / "readonly" / "kgb").write_text("a file where the cache folder would be")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "readonly"))
        statements.clear()
        blobs = BlobStore(tmp_path / "third" / "blobs")
        MlflowProjection(f"sqlite:///{tmp_path / 'third' / 'mlflow.db'}", "kgb", background=False).project(job_log(blobs), blobs)
        assert sum(1 for s in statements if s.lstrip().upper().startswith("CREATE")) > 100  # migrated in place
        assert trial_runs(f"sqlite:///{tmp_path / 'third' / 'mlflow.db'}") == 1
    finally:
        event.remove(sqlalchemy.engine.Engine, "before_cursor_execute", count)


def test_a_store_that_mlflow_left_half_made_is_set_aside_and_made_anew(tmp_path, capsys):
    """A half-made store at the store's own path (made by MLflow's client, `mlflow ui`, or a
    kgb before session 47): it holds no runs, and is moved aside, not deleted."""
    store = tmp_path / "mlflow.db"
    uri = f"sqlite:///{store}"
    cut_short([uri], CUTS[:1], "mlflow")
    blobs = BlobStore(tmp_path / "blobs")
    MlflowProjection(uri, "kgb", background=False).project(job_log(blobs), blobs)
    assert trial_runs(uri) == 1
    [aside] = tmp_path.glob("mlflow.db.half-made-*[0-9]")  # with its journal, where it left one
    assert f"set aside as {aside}" in capsys.readouterr().err


def test_a_query_of_a_half_made_store_says_so_and_how_it_is_made_anew(tmp_path):
    """The queries only read a store: they name a half-made one as such, with what sets it
    aside, where they said only "not an MLflow store (no such table: runs)"."""
    store = tmp_path / "mlflow.db"
    cut_short([f"sqlite:///{store}"], (20,), "mlflow")  # before MLflow made its runs table
    with pytest.raises(StoreError, match="half-made .*kgb.tracking rebuild"):
        Store(f"sqlite:///{store}").job_runs()


def test_a_store_that_holds_runs_is_never_set_aside(tmp_path):
    """A store whose schema MLflow would not open, but which holds runs: kgb leaves it, and
    the user, to MLflow's own advice (`mlflow db upgrade`)."""
    store = tmp_path / "mlflow.db"
    uri = f"sqlite:///{store}"
    blobs = BlobStore(tmp_path / "blobs")
    MlflowProjection(uri, "kgb", background=False).project(job_log(blobs), blobs)
    with sqlite3.connect(store) as db:  # as an older MLflow's store looks to this one
        db.execute("UPDATE alembic_version SET version_num = '0a8213491aaa'")
    db.close()
    opened = subprocess.run([sys.executable, "-c", OPEN, uri], capture_output=True, text=True, timeout=300)
    assert opened.returncode != 0 and "out-of-date database schema" in opened.stderr
    assert not list(tmp_path.glob("mlflow.db.half-made-*"))
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [("0a8213491aaa",)]
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (2,)  # the job's and its trial's
    db.close()
