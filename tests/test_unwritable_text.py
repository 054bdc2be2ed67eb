"""Text a candidate writes reaches every writer of kgb's records: a lone UTF-16 surrogate in
it (`chr(0xD800)` in an error message, a `"\\ud800"` escape in JSON), which no UTF-8 writer
takes, broke the MLflow projection's SQLite writes and ended the job, on that run and on
every later run of it, whose replayed events held it again (session 45's red team). The
event log keeps such text with U+FFFD in its place (kgb.tracking.log.writable_text)."""

from __future__ import annotations

import json
import subprocess
import sys

from kgb.operators import REPO_ROOT
from kgb.query import trial_runs
from kgb.tracking.events import CandidateEvaluated
from kgb.tracking.log import read_events

SURROGATE = """
import torch
import triton


def softmax_int(self, dim, dtype=None):
    raise RuntimeError("bad " + chr(0xD800) + " value")
"""


def _job(tmp_path, kernels):
    return subprocess.run([sys.executable, str(REPO_ROOT / "run.py"), "chip=cpu", "method=files",
                           f"method.dir={kernels}", "ops=[aten::softmax,aten::add]", f"tracking.root={tmp_path / 'out'}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)


def test_a_lone_surrogate_in_a_candidates_error_neither_ends_the_job_nor_its_projection(tmp_path):
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    (kernels / "aten__softmax.py").write_text(SURROGATE)
    (kernels / "aten__add.py").write_text((REPO_ROOT / "operators/aten/add/solution.py").read_text())
    for _ in range(2):  # and again: the rerun replays the log into the projection
        done = _job(tmp_path, kernels)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "correct 1/2" in done.stdout, done.stdout[-2000:]
    (log,) = (tmp_path / "out").glob("jobs/*/events.jsonl")
    (failed,) = [e for e in read_events(log) if isinstance(e, CandidateEvaluated) and e.verdict.status != "correct"]
    assert "bad \ufffd value" in failed.verdict.message
    runs = trial_runs(f"sqlite:///{tmp_path / 'out' / 'mlflow.db'}")
    assert sorted(r.data.tags["kgb.status"] for r in runs) == ["correct", "runtime_error"]


def test_a_log_written_with_one_reads_back_writable(tmp_path):
    """A log that an earlier kgb wrote with a lone surrogate in it reads back without it."""
    log = tmp_path / "events.jsonl"
    line = json.dumps({"kind": "TrialStarted", "seq": 0, "ts": 1.0, "job": "j", "trial": "t", "op": "aten::add\ud800",
                       "spec_version": 1, "sample": 0})
    log.write_text(line + "\n")
    (event,) = read_events(log)
    assert event.op == "aten::add\ufffd"
    event.op.encode("utf-8")
