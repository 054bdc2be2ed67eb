"""Infrastructure failures end a trial as `infra_error`: no result, and a re-run retries it.

A provider that goes down in the middle of a refine conversation, an endpoint nobody
answers at, the judge's worker killed from outside, a full disk: none of these is a
verdict about the method, so none may end as wrong_output or method_error. The retry
pays only for what the failed attempt did not already get.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from fake_llm_server import Answer, Call, Fail, FakeLLMServer

from kgb import operators
from kgb.config import (
    ChipConfig,
    Config,
    EvalConfig,
    ExpertConfig,
    LLMConfig,
    ModelConfig,
    RefineConfig,
    SourceConfig,
    TrackingConfig,
)
from kgb.evaluate import EvalSettings, Status
from kgb.operators import REPO_ROOT
from kgb.query import trial_runs
from kgb.run import run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import CandidateEvaluated, ModelCalled, TrialEnd, TrialFinished
from kgb.tracking.log import EventLog, read_events
from kgb.trial import InfrastructureFailure, TrialContext

KEY = "sk-test-infra"
ADD = (REPO_ROOT / "operators/aten/add/solution.py").read_text()
WRONG_ADD = ADD.replace("r = a + alpha * b", "r = a - alpha * b")


def config(method, model, root: Path, ops: list[str]) -> Config:
    return Config(method=method, model=model, source=SourceConfig("aten"), chip=ChipConfig(name="cpu", backend="cpu"),
                  eval=EvalConfig(cases="smoke"), tracking=TrackingConfig(root=str(root)), ops=ops)


def events(root: Path):
    return [e for p in root.glob("jobs/*/events.jsonl") for e in read_events(p)]


def test_a_provider_outage_mid_refine_is_retried_by_a_rerun_without_paying_twice(tmp_path, monkeypatch):
    monkeypatch.setenv("KGB_TEST_KEY", KEY)
    down = True

    def responder(call: Call):
        if call.user_turn == 1:
            return Answer(f"```python\n{WRONG_ADD}```")
        if call.user_turn == 2:
            return Answer("I would rather explain the idea than write it.")
        return Fail(503, message="overloaded") if down else Answer(f"```python\n{ADD}```")

    with FakeLLMServer(responder, api_key=KEY) as server:
        model = LLMConfig(name="fake-model", provider="anthropic", base_url=server.url, api_key_env="KGB_TEST_KEY",
                          retries=1, backoff_s=0.01)
        cfg = config(RefineConfig(rounds=5), model, tmp_path, ["aten::add"])
        first = run_job(cfg)
        assert [c.user_turn for c in server.calls] == [1, 2, 3, 3]  # the third turn, then its one retry
        [end] = [e for e in events(tmp_path) if isinstance(e, TrialFinished)]
        assert end.end == TrialEnd.INFRA_ERROR and "HTTP 503" in end.reason
        # no result: not a wrong_output (its one judged candidate), not counted, not in MLflow
        assert (first.trials, first.correct) == (0, 0)
        assert trial_runs(f"sqlite:///{tmp_path / 'mlflow.db'}") == []

        down = False
        second = run_job(cfg)
        assert [c.user_turn for c in server.calls] == [1, 2, 3, 3, 3]  # turns 1 and 2 answered from the log
    assert (second.trials, second.correct) == (1, 1)
    log = events(tmp_path)
    assert [e.end for e in log if isinstance(e, TrialFinished)] == [TrialEnd.INFRA_ERROR, TrialEnd.COMPLETED]
    assert sum(isinstance(e, CandidateEvaluated) for e in log) == 2  # the wrong kernel is not judged again
    assert sum(1 for e in log if isinstance(e, ModelCalled) and e.error is None) == 3
    [run] = trial_runs(f"sqlite:///{tmp_path / 'mlflow.db'}")
    assert run.data.tags["kgb.status"] == "correct"


def test_an_endpoint_nobody_answers_at_is_an_infrastructure_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("KGB_TEST_KEY", KEY)
    with FakeLLMServer(lambda call: Answer("unused")) as server:
        url = server.openai_url
    # the server is gone: every connection is refused (validate=false: the name is trusted)
    model = LLMConfig(name="fake-model", provider="openai", base_url=url, api_key_env="KGB_TEST_KEY",
                      retries=1, backoff_s=0.01, validate=False)
    run_job(config(RefineConfig(rounds=2), model, tmp_path, ["aten::add"]))
    [end] = [e for e in events(tmp_path) if isinstance(e, TrialFinished)]
    assert end.end == TrialEnd.INFRA_ERROR and "connection failed" in end.reason


def test_a_full_disk_in_the_judge_is_an_infrastructure_failure(tmp_path, monkeypatch):
    def no_space(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", "/tmp/kgb-eval-x")

    monkeypatch.setattr("kgb.trial.evaluate", no_space)
    summary = run_job(config(ExpertConfig(), ModelConfig(), tmp_path, ["aten::add"]))
    [end] = [e for e in events(tmp_path) if isinstance(e, TrialFinished)]
    assert end.end == TrialEnd.INFRA_ERROR and "No space left on device" in end.reason
    assert summary.trials == 0 and not any(isinstance(e, CandidateEvaluated) for e in events(tmp_path))
    monkeypatch.undo()
    assert run_job(config(ExpertConfig(), ModelConfig(), tmp_path, ["aten::add"])).correct == 1  # retried


def children(pid: int) -> list[tuple[int, bytes]]:
    """(pid, command line) of the processes whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append((int(entry.name), cmdline))
    return found


def judge_pids() -> list[int]:
    """The judge processes of this test process: children of its evaluation engine."""
    engines = [pid for pid, cmdline in children(os.getpid()) if b"kgb.evaluate" in cmdline]
    return [pid for engine in engines for pid, _ in children(engine)]


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the worker through /proc")
def test_a_worker_killed_from_outside_is_not_the_candidates_verdict(tmp_path):
    spec = operators.load("aten::softmax")
    settings = EvalSettings(device="cpu", case_tags=("smoke",), time_cases=(), timeout_s=120)
    ctx = TrialContext(problem=spec.problem(chip_notes="", show_reference=True), spec=spec, settings=settings,
                       log=EventLog(tmp_path / "events.jsonl"), blobs=BlobStore(tmp_path / "blobs"),
                       job="j", key="k", sample=0)

    judged = threading.Event()

    def kill_the_worker() -> None:  # what the OOM killer or an operator does
        # every judge of the engine, until the evaluation ends: besides the one judging this
        # candidate there may be spare judges (kgb.evaluate.spare), and it may not be up yet
        deadline = time.time() + 60
        while time.time() < deadline and not judged.is_set():
            for pid in judge_pids():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)

    killer = threading.Thread(target=kill_the_worker)
    killer.start()
    try:
        with pytest.raises(InfrastructureFailure, match="killed from outside.*SIGKILL"):
            ctx.evaluate((REPO_ROOT / "tests/candidates/softmax_hang.py").read_text())
    finally:
        judged.set()
        killer.join()
    assert not any(isinstance(e, CandidateEvaluated) for e in ctx.log.events())


def test_a_candidate_that_says_its_judge_was_killed_is_judged_as_what_it_did(tmp_path):
    """Until session 44 a killed judge was told by its verdict's message, which quotes the
    candidate: a candidate that raised the right words on the cases it was unsure of ended
    its trial as an infrastructure error, no result, left out of accuracy and retried."""
    spec = operators.load("aten::softmax")
    settings = EvalSettings(device="cpu", case_tags=("smoke",), time_cases=(), timeout_s=120)
    ctx = TrialContext(problem=spec.problem(chip_notes="", show_reference=True), spec=spec, settings=settings,
                       log=EventLog(tmp_path / "events.jsonl"), blobs=BlobStore(tmp_path / "blobs"),
                       job="j", key="k", sample=0)
    source = ("import torch\nimport triton\n\n\ndef softmax_int(self, dim, dtype=None):\n"
              "    raise RuntimeError('the worker process died (killed by signal SIGKILL)')\n")
    verdict = ctx.evaluate(source).verdict
    assert verdict.status == Status.RUNTIME_ERROR
    assert "killed by signal SIGKILL" in verdict.message  # its words, reported as its failure
