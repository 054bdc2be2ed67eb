"""The tracking URIs kgb accepts, refused in one line where MLflow could not use them:
before any trial in run.py, at once in the queries."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from kgb.config import ConfigError
from kgb.operators import REPO_ROOT
from kgb.preflight import check_tracking_uri
from kgb.query.__main__ import main as query

FILE_STORES = [("./mlruns", "sqlite:///./mlruns/mlflow.db"), ("file:///tmp/x", "sqlite:////tmp/x/mlflow.db"),
               ("outputs/mlflow.db", "sqlite:///outputs/mlflow.db")]


@pytest.fixture(autouse=True)
def _no_file_store_opt_in(monkeypatch):
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)


@pytest.mark.parametrize(("uri", "instead"), FILE_STORES)
def test_a_file_store_is_refused_before_any_trial(uri, instead):
    """The pinned MLflow refuses file stores: the job judged every trial, then its projection
    failed with "The filesystem tracking backend ... is in maintenance mode"."""
    with pytest.raises(ConfigError) as refused:
        check_tracking_uri(uri)
    message = str(refused.value)
    assert message.startswith(f"tracking.uri={uri}: ") and "\n" not in message
    assert f"tracking.uri={instead}" in message and "http(s)://" in message


@pytest.mark.parametrize("uri", ["sqlite:///outputs/mlflow.db", "http://127.0.0.1:5000", "postgresql+psycopg2://db/kgb"])
def test_the_stores_mlflow_opens_pass(uri):
    check_tracking_uri(uri)


def test_a_file_store_mlflow_is_told_to_allow_passes(monkeypatch):
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    check_tracking_uri("./mlruns")


@pytest.mark.parametrize(("uri", "instead"), FILE_STORES)
def test_a_query_of_a_file_store_says_what_to_give_instead(tmp_path, monkeypatch, capsys, uri, instead):
    monkeypatch.chdir(tmp_path)
    assert query(["leaderboard", "--tracking-uri", uri]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: --tracking-uri {uri}: ") and f"--tracking-uri {instead}" in line
    assert list(tmp_path.iterdir()) == []  # no store made


def test_a_query_of_a_server_that_does_not_answer_fails_within_seconds(tmp_path):
    """MLflow's client retried for some four minutes, silent, then printed a traceback."""
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "kgb.query", "leaderboard", "--tracking-uri", f"http://127.0.0.1:{port}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    assert time.monotonic() - start < 30
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"error: no tracking server answers at http://127.0.0.1:{port} ")
    assert "mlflow server" in line and "--tracking-uri" in line


def test_a_rebuild_into_a_file_store_or_a_silent_server_is_refused_in_one_line(tmp_path, capsys):
    """The projection failure's own advice (`python -m kgb.tracking rebuild OUTPUTS --tracking-uri
    ./mlruns`) printed MLflow's traceback, and against a server that does not answer it waited
    for minutes."""
    from kgb.tracking.__main__ import main

    (tmp_path / "jobs" / "j").mkdir(parents=True)
    (tmp_path / "jobs" / "j" / "events.jsonl").write_text("")
    assert main(["rebuild", str(tmp_path), "--tracking-uri", "./mlruns"]) == 1
    assert "sqlite:///./mlruns/mlflow.db" in capsys.readouterr().err
    assert main(["rebuild", str(tmp_path), "--tracking-uri", "http://127.0.0.1:1"]) == 1
    assert "no tracking server answers" in capsys.readouterr().err
