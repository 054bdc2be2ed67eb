"""Many hosts: one shared store, and a sweep routed to the hosts that have each chip.

The store test brings up a real PostgreSQL cluster and a real `mlflow server` on it
(tests/store_server.py) and runs two kgb jobs at once against it, as two hosts would: two
processes, one shared tracking root (the NFS mount of docs/many-hosts.md), one tracking
URI. It skips, saying why, where Debian's postgresql or the psycopg driver is absent.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pytest
import store_server

from kgb.operators import REPO_ROOT
from kgb.tracking.events import RunFinished, TrialFinished
from kgb.tracking.log import read_events

JOBS = {"aten::add,aten::cos": 2, "aten::cosh,aten::eq": 2}  # two jobs: their operators and trial counts


def kgb(*args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, **popen)


def finished_trials(root: Path) -> dict[str, set[str]]:
    """Trial keys finished per job, from the event logs (the source of truth)."""
    return {path.parent.name: {e.trial for e in read_events(path) if isinstance(e, TrialFinished)}
            for path in root.glob("jobs/*/events.jsonl")}


@pytest.mark.slow
@pytest.mark.skipif(store_server.missing() is not None, reason=str(store_server.missing()))
def test_two_hosts_project_into_one_mlflow_server_on_postgresql(tmp_path):
    from mlflow.tracking import MlflowClient

    from kgb.query import trial_runs

    with store_server.shared_store() as store:
        # the one-time setup of docs/many-hosts.md: the experiment exists before the hosts start
        MlflowClient(store.uri).create_experiment("kgb")
        hosts = [kgb("run.py", "chip=cpu", f"ops=[{ops}]", f"tracking.root={tmp_path}", f"tracking.uri={store.uri}")
                 for ops in JOBS]
        outputs = [host.communicate(timeout=600)[0] for host in hosts]
        for host, output in zip(hosts, outputs, strict=True):
            assert host.returncode == 0, output

        logged = finished_trials(tmp_path)
        assert sorted(len(keys) for keys in logged.values()) == sorted(JOBS.values())
        runs = trial_runs(store.uri)
        projected: dict[str, list[str]] = {}
        for run in runs:
            projected.setdefault(run.data.tags["kgb.job"], []).append(run.data.tags["kgb.trial"])
        # every trial of both jobs is there, once
        assert {job: sorted(keys) for job, keys in projected.items()} == {job: sorted(keys) for job, keys in logged.items()}
        assert {run.data.tags["kgb.status"] for run in runs} == {"correct"}
        # the artifacts went to the shared root, where any host (and the server) reads them
        kernels = list(store.artifacts.rglob("kernel.py"))
        assert len(kernels) == sum(JOBS.values())
        assert all(run.info.artifact_uri.startswith(store.artifacts.as_uri()) for run in runs)
        for job in logged:
            assert any(isinstance(e, RunFinished) for e in read_events(tmp_path / "jobs" / job / "events.jsonl"))

        board = subprocess.run([sys.executable, "-m", "kgb.query", "leaderboard", "--format", "csv",
                                "--tracking-uri", store.uri], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
        assert board.returncode == 0, board.stderr
        rows = list(csv.DictReader(io.StringIO(board.stdout)))
        assert [(r["method"], r["chip"], r["trials"], r["correct"]) for r in rows] == [("expert", "cpu", "4", "4")]

        best = subprocess.run([sys.executable, "-m", "kgb.query", "best", "--op", "aten::cosh", "--chip", "cpu",
                               "--dest", str(tmp_path / "best"), "--tracking-uri", store.uri],
                              cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
        assert best.returncode == 0, best.stderr
        assert "@triton.jit" in (tmp_path / "best" / "kernel.py").read_text()
