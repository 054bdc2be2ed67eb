"""Agent methods through `python run.py`: the mission's sweep command against a local
server, and a killed agent trial that resumes without paying twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from agent_script import ADD, check, done, scripted, write
from fake_llm_server import Call, FakeLLMServer, Hang
from mlflow.tracking import MlflowClient

from kgb.operators import REPO_ROOT
from kgb.query import trial_runs
from kgb.tracking.events import (
    CandidateChecked,
    CandidateEvaluated,
    FinalKernelChosen,
    FinalRule,
    ModelCalled,
    RunStarted,
    SessionStarted,
    TrialEnd,
    TrialFinished,
)
from kgb.tracking.log import read_events

SECRET = "sk-ant-test-agent-run-0123456789"


def kgb(server: FakeLLMServer, root: Path, *overrides: str, popen: bool = False):
    cmd = [sys.executable, "run.py", *overrides, "chip=cpu", "ops=[aten::add]", "model=anthropic",
           f"model.base_url={server.url}", "model.name=fake-model", "model.retries=0", f"tracking.root={root}"]
    env = {**os.environ, "ANTHROPIC_API_KEY": SECRET}
    if popen:
        return subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
    done_ = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done_.returncode == 0, done_.stdout[-3000:] + done_.stderr[-5000:]
    return done_


def logs(root: Path) -> dict[str, list]:
    out = {}
    for path in root.glob("jobs/*/events.jsonl"):
        events = read_events(path)
        out[next(e for e in events if isinstance(e, RunStarted)).method] = events
    return out


@pytest.mark.slow
def test_the_mission_sweep_runs_aiko_and_autokernel(tmp_path):
    script = {"agent": [write(ADD, input=1200, output=700), check(input=1500, output=20), done(input=1700, output=30)],
              "experiment 1": [write(ADD, input=1100, output=650), done(input=1300, output=25)]}
    with FakeLLMServer(scripted(script), api_key=SECRET) as server:
        out = kgb(server, tmp_path, "-m", "method=aiko,autokernel")
        served = sum(c.turn.input + c.turn.output for c in server.answered)
    jobs = logs(tmp_path)
    assert set(jobs) == {"aiko", "autokernel"}
    for method, events in jobs.items():
        [final] = [e for e in events if isinstance(e, FinalKernelChosen)]
        assert final.rule == FinalRule.BEST_CHECK, method
        assert [e.verdict.status.value for e in events if isinstance(e, CandidateEvaluated)] == ["correct"]
        assert [e.end for e in events if isinstance(e, TrialFinished)] == [TrialEnd.COMPLETED]
    tokens = sum(e.usage.total_tokens for events in jobs.values() for e in events if isinstance(e, ModelCalled))
    # aiko stops after its correct check (the CPU times nothing: correct reaches the target);
    # autokernel's first experiment is kept and reaches it too
    assert tokens == served == (1900 + 1520) + (1750 + 1325)
    assert SECRET not in out.stdout + out.stderr
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    for run in trial_runs(f"sqlite:///{tmp_path / 'mlflow.db'}"):
        history = client.get_metric_history(run.info.run_id, "check_correct")
        assert [(m.step, m.value) for m in history] == [(1, 1.0)]
        assert run.data.metrics["agent_checks"] == 1 and run.data.metrics["correct"] == 1.0
        transcript = Path(client.download_artifacts(run.info.run_id, "agent/transcript.md")).read_text()
        assert "# Final kernel: rule best_check" in transcript and "### write_file" in transcript
        kernel = client.download_artifacts(run.info.run_id, "agent/workspace/kernel.py")
        assert Path(kernel).read_text() == ADD
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]


@pytest.mark.slow
def test_a_killed_agent_trial_resumes_without_paying_or_judging_twice(tmp_path):
    """write, check, then the server holds the third call and the run is killed; the re-run
    answers the first two calls from the log, takes the check's verdict from the log, and
    pays for the third call only."""
    steps = {"agent": [write(ADD, input=1000, output=600), check(input=1200, output=10), done(input=1300, output=20)]}
    respond = scripted(steps)
    held = []

    def responder(call: Call):
        if call.exchange == 3 and not held:
            held.append(call)
            return Hang(120)
        return respond(call)

    with FakeLLMServer(responder, api_key=SECRET) as server:
        proc = kgb(server, tmp_path, "method=claude_code", "method.agent.driver=loop", "tracking.mlflow=false", popen=True)
        assert server.hanging.wait(240), proc.communicate()[0]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert [c.exchange for c in server.calls] == [1, 2, 3]
        kgb(server, tmp_path, "method=claude_code", "method.agent.driver=loop", "tracking.mlflow=false")
        assert [c.exchange for c in server.calls] == [1, 2, 3, 3]  # only the held call is sent again
    [events] = logs(tmp_path).values()
    calls = [e for e in events if isinstance(e, ModelCalled)]
    assert sum(c.usage.total_tokens for c in calls) == 1600 + 1210 + 1320
    assert len([e for e in events if isinstance(e, CandidateChecked)]) == 1  # not judged again
    assert len([e for e in events if isinstance(e, SessionStarted)]) == 2  # one per attempt
    assert [e.end for e in events if isinstance(e, TrialFinished)] == [TrialEnd.COMPLETED]
