"""Session 51's user walk of the agent methods (aiko, autokernel, iterative, claude_code with
the loop and the fake CLIs, against tests/fake_llm_server.py): what it found that changed an
agent trial's result or paid for a call twice, each fixed and held here.

- A `run` with `timeout_s: "abc"`, a path with a NUL byte, or tool arguments that are not an
  object raised out of the session: the trial ended as method_error, a correct kernel it had
  already checked thrown away.
- A judge killed from outside (the OOM killer) during a check, or its engine gone, ended the
  trial as method_error, counted against the method and never retried; the final kernel's
  judge failing the same way is an infra_error (kgb.trial).
- A write outside the workspace was refused with the workspace's own path, new for each
  attempt: a resumed trial's next requests differed from the logged ones and were paid again.

The judge is test_agent_methods' timed fake, so that these take a second or two each."""

from __future__ import annotations

import json

import pytest
from agent_script import ADD, check, done, scripted, write
from fake_llm_server import Answer, Call, Fail, FakeLLMServer, Malformed, ToolCall, anthropic_body
from test_agent_methods import timed_judge
from test_agents import SECRET, events, job, model, of

from kgb.agents.config import CodingAgentConfig, IterativeConfig
from kgb.evaluate import JudgeKilled, Status
from kgb.run import run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateChecked,
    CandidateEvaluated,
    CandidateProposed,
    FinalKernelChosen,
    FinalRule,
    ModelCalled,
    ToolCalled,
    TrialEnd,
    TrialFinished,
)


@pytest.fixture(autouse=True)
def fake_judge(monkeypatch):
    monkeypatch.setattr("kgb.agents.checks.evaluate", timed_judge)
    monkeypatch.setattr("kgb.trial.evaluate", timed_judge)
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)


def results(root, evs) -> list[tuple[str, bool, str]]:
    blobs = BlobStore(root / "blobs")
    return [(t.tool, t.is_error, blobs.get(t.result_blob)) for t in of(ToolCalled, evs)]


def test_odd_tool_arguments_are_the_agents_mistake_not_the_end_of_its_trial(tmp_path):
    """Each odd call is an error the agent is shown; the trial goes on, and its correct
    kernel is the result (before: method_error at the first of them)."""
    odd = Answer("Odd calls.", tools=(
        ToolCall("run", {"command": "echo hi", "timeout_s": "abc"}),
        ToolCall("run", {"command": "echo hi", "timeout_s": "nan"}),
        ToolCall("run", {"command": "echo hi", "timeout_s": -3}),
        ToolCall("read_file", {"path": "kernel\x00.py"}),
        ToolCall("write_file", {"path": "a\x00b.py", "content": "x = 1\n"}),
        ToolCall("check", {"path": "kernel.py\x00"}),
        ToolCall("check", {}),  # made not an object below
    ))

    def not_an_object(call: Call):
        body = anthropic_body(call, odd, 2)
        body["content"][-1]["input"] = "not an object"  # what an Anthropic-style endpoint may send
        return Malformed(json.dumps(body))

    script = {"agent": [Answer("", tools=(ToolCall("write_file", {"path": "kernel.py", "content": ADD}),
                                          ToolCall("check", {}))), not_an_object, done()]}
    with FakeLLMServer(scripted(script)) as server:
        summary = run_job(job(CodingAgentConfig(), model(server, "anthropic"), tmp_path))
        assert len(server.calls) == 3
    evs = events(tmp_path)
    [end] = of(TrialFinished, evs)
    assert end.end == TrialEnd.COMPLETED, end.reason
    assert summary.accuracy == 1.0
    said = results(tmp_path, evs)[2:]
    assert [(tool, error) for tool, error, _ in said] == [("run", True)] * 3 + [
        ("read_file", True), ("write_file", True), ("check", True), ("check", True)]
    assert all("timeout_s=" in text and "positive number of seconds" in text for _, _, text in said[:3])
    assert "null byte" in said[3][2] and "null byte" in said[5][2]
    assert said[6][2] == "the arguments are not a JSON object: 'not an object'"
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.BEST_CHECK


def killed_once():
    """A judge whose first evaluation is killed from outside, the later ones judged."""
    killed = [True]

    def judge(source, spec, settings, baselines=None):
        if killed and killed.pop():
            raise JudgeKilled("the judge process was killed from outside (killed by signal SIGKILL)")
        return timed_judge(source, spec, settings, baselines)

    return judge

def test_a_judge_killed_during_a_check_is_no_verdict_and_the_agent_checks_again(tmp_path, monkeypatch):
    """The check tool tells the agent, as ./check does; the trial goes on to its result
    (before: method_error, the trial counted against the method and never retried)."""
    monkeypatch.setattr("kgb.agents.checks.evaluate", killed_once())
    script = {"agent": [write(ADD), check(), check(), done()]}
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(CodingAgentConfig(), model(server, "anthropic"), tmp_path))
    evs = events(tmp_path)
    [end] = of(TrialFinished, evs)
    assert end.end == TrialEnd.COMPLETED, end.reason
    first, second = [(error, text) for tool, error, text in results(tmp_path, evs) if tool == "check"]
    assert first[0] and "killed from outside" in first[1] and "check it again" in first[1]
    assert not second[0] and "status: correct" in second[1]
    assert [c.verdict.status for c in of(CandidateChecked, evs)] == [Status.CORRECT]
    assert [e.verdict.status for e in of(CandidateEvaluated, evs)] == [Status.CORRECT]


def test_a_judge_killed_during_a_harness_check_is_an_infra_error_the_next_run_goes_on(tmp_path, monkeypatch):
    """iterative's check between sessions: the trial ends infra_error (no result, retried),
    and the next run judges the candidate without proposing it a second time."""
    monkeypatch.setattr("kgb.agents.checks.evaluate", killed_once())
    method = IterativeConfig(sessions=1)
    with FakeLLMServer(scripted({"session 1": [write(ADD), done()]})) as server:
        run_job(job(method, model(server, "anthropic"), tmp_path))
        assert [e.end for e in of(TrialFinished, events(tmp_path))] == [TrialEnd.INFRA_ERROR]
        summary = run_job(job(method, model(server, "anthropic"), tmp_path))
        assert len(server.calls) == 2  # the second run answered both calls from the log
    evs = events(tmp_path)
    assert [e.end for e in of(TrialFinished, evs)] == [TrialEnd.INFRA_ERROR, TrialEnd.COMPLETED]
    assert summary.accuracy == 1.0
    proposed = [e.candidate for e in of(CandidateProposed, evs)]
    assert len(proposed) == len(set(proposed)) == 2  # the harness's check, the final kernel
    assert [c.verdict.status for c in of(CandidateChecked, evs)] == [Status.CORRECT]


def test_a_write_outside_the_workspace_does_not_make_a_resumed_trial_pay_again(tmp_path):
    """The refusal names no path of the trial's folders, which are new for every attempt: the
    next run answers every call the first one was answered from the log (before: from the
    refusal on, every call was sent, and paid, again)."""
    outside = Answer("Notes outside.", tools=(ToolCall("write_file", {"path": "../notes.md", "content": "n\n"}),
                                              ToolCall("write_file", {"path": "kernel.py", "content": ADD})))
    steps = scripted({"agent": [outside, Answer("", tools=(ToolCall("read_file", {"path": "kernel.py"}),)), done()]})
    down = [True]  # the third call finds the provider down, once: the trial ends infra_error

    def respond(call: Call):
        return Fail(503) if call.exchange == 3 and down and down.pop() else steps(call)

    with FakeLLMServer(respond) as server:
        run_job(job(CodingAgentConfig(), model(server, "anthropic"), tmp_path))
        refusal = server.calls[1].tool_results[0]
        assert refusal.startswith("../notes.md: outside the workspace") and "kgb-agent-" not in refusal
        summary = run_job(job(CodingAgentConfig(), model(server, "anthropic"), tmp_path))
        assert [c.exchange for c in server.calls] == [1, 2, 3, 3]  # only the failed call is sent again
    assert summary.accuracy == 1.0
    evs = events(tmp_path)
    assert [e.end for e in of(TrialFinished, evs)] == [TrialEnd.INFRA_ERROR, TrialEnd.COMPLETED]
    assert len([c for c in of(ModelCalled, evs) if c.error is None]) == 3  # each answer paid once
