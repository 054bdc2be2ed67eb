"""The agent's wall clock (`method.agent.wall_s`) holds within one model reply.

A user walk found every tool call of a reply run past it: each command was given at least
1 s, and a check had no cap (wall_s=3 and one reply of six `sleep 2` ran 8.8 s), and work
done in that overrun could become the final kernel. Now, past the wall clock, every
remaining call of the reply is answered with WALL_SPENT without running, a command gets at
most the time left, and a check is refused; a check begun before it finishes, and the
final kernel waits for it (kgb/agents/budget.py says why that is fair).

A model reply still in flight at the clock is cut there too (it once held the trial for up
to model.timeout_s, 600 s, and each retry).

The judge is test_agent_methods' timed fake; the whole file takes some 40 s."""

from __future__ import annotations

import threading
import time

import pytest
from agent_script import ADD, NO_KERNEL_ADD, done, scripted
from fake_llm_server import Answer, FakeLLMServer, ToolCall
from test_agent_methods import timed_judge
from test_agents import SECRET, events, job, model, of

from kgb.agents.budget import WALL_SPENT, Budget
from kgb.agents.checks import Checker
from kgb.agents.config import AgentConfig, CodingAgentConfig
from kgb.run import run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateChecked,
    FinalKernelChosen,
    FinalRule,
    ModelCalled,
    SessionStarted,
    ToolCalled,
    TrialEnd,
    TrialFinished,
)

WALL_S = 4.0
MARGIN_S = 1.0  # killing a command's process group, and a loaded machine


def agent_s(evs) -> float:
    """The agent's time: from its first session's start to the final kernel's choice (the
    budget counts from the workspace's readiness, just before; not the trial's setup)."""
    return of(FinalKernelChosen, evs)[0].ts - of(SessionStarted, evs)[0].ts


@pytest.fixture(autouse=True)
def fake_judge(monkeypatch):
    monkeypatch.setattr("kgb.agents.checks.evaluate", timed_judge)
    monkeypatch.setattr("kgb.trial.evaluate", timed_judge)
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)


def test_a_reply_of_slow_commands_ends_at_the_wall_clock_the_later_calls_refused(tmp_path):
    """One reply: a kernel without Triton written, six `sleep 2`, then a check of a kernel it
    would have written past the clock. The tools run within wall_s (before: 4 s, then 1 s
    for each later command, and the check judged), the rest are WALL_SPENT, and the final
    kernel is the workspace's, written within the budget (before: the late check's)."""
    calls = (ToolCall("write_file", {"path": "kernel.py", "content": NO_KERNEL_ADD}),
             *[ToolCall("run", {"command": f"sleep 2; echo slept {i}"}) for i in range(6)],
             ToolCall("write_file", {"path": "kernel.py", "content": ADD}),
             ToolCall("check", {}))
    script = {"agent": [Answer("Slow work.", tools=calls), done()]}
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(CodingAgentConfig(agent=AgentConfig(wall_s=WALL_S)), model(server, "anthropic"), tmp_path))
        assert len(server.calls) == 1  # the session ended at the budget: no second model call
    evs = events(tmp_path)
    [end] = of(TrialFinished, evs)
    assert (end.end, end.reason) == (TrialEnd.BUDGET, f"agent wall clock reached: {WALL_S:g} s")
    assert agent_s(evs) < WALL_S + MARGIN_S  # before: 9 s
    blobs = BlobStore(tmp_path / "blobs")
    tools = of(ToolCalled, evs)
    said = [(t.tool, t.is_error, blobs.get(t.result_blob)) for t in tools]
    assert len(said) == len(calls)  # every call of the reply is answered
    refused = [i for i, (_, _, text) in enumerate(said) if text == WALL_SPENT]
    assert refused and refused == list(range(refused[0], len(said)))  # from the first refusal on, all
    assert len(refused) >= 3  # at most 2 of 6 `sleep 2` fit in 4 s: the second write and the check too
    assert all(said[i][1] for i in refused) and all(tools[i].duration_s < 0.5 for i in refused)
    ran = [t for t in tools if t.tool == "run" and blobs.get(t.result_blob) != WALL_SPENT]
    assert ran and blobs.get(ran[-1].result_blob).startswith("killed after")  # cut at the clock, no 1 s floor
    assert sum(t.duration_s for t in tools) < WALL_S + MARGIN_S  # before: some 8 s
    assert of(CandidateChecked, evs) == []
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.WORKSPACE and blobs.get(final.source_blob) == NO_KERNEL_ADD


def test_a_check_asked_past_the_wall_clock_is_refused_and_not_counted():
    """./check reaches the budget through CheckServer.refusal = Budget.take_check."""
    budget = Budget(AgentConfig(wall_s=0.05))
    assert budget.take_check() is None and budget.checks == 1
    time.sleep(0.1)
    assert budget.take_check() == "agent wall clock reached: 0.05 s"
    assert budget.checks == 1 and budget.reached == "agent wall clock reached: 0.05 s"


def test_the_final_kernel_waits_for_a_check_still_being_judged():
    """A ./check whose command was killed at the clock is still judged in the check server's
    thread: best() waits for it, so the final kernel does not depend on which ends first."""
    checker = Checker.__new__(Checker)
    checker.checks, checker._lock = [], threading.RLock()
    judged = object()
    holding = threading.Event()

    def judge() -> None:
        with checker._lock:
            holding.set()
            time.sleep(0.3)
            checker.checks.append(type("C", (), {"verdict": type("V", (), {"correct": True, "speedup": 2.0})()})())
            checker.checks[-1].marker = judged

    thread = threading.Thread(target=judge)
    thread.start()
    holding.wait()
    best = checker.best()
    thread.join()
    assert best is not None and best.marker is judged


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_model_reply_in_flight_at_the_wall_clock_is_cut_there(provider, tmp_path):
    """The agent writes a kernel, then the model hangs on its second call. Before, the trial
    waited for the reply as long as model.timeout_s (600 s) and each retry; now the call is
    cut at the wall clock (the SDK's own timeout, bounded by the time left), logged with the
    reason, and the trial ends at its budget with the kernel written in time."""
    from fake_llm_server import Hang

    wall_s = 10.0  # the trial's setup takes seconds on a loaded machine: the hang must fall within
    script = scripted({"agent": [Answer("", tools=(ToolCall("write_file", {"path": "kernel.py", "content": ADD}),)),
                                 done()]})
    with FakeLLMServer(lambda call: Hang(120) if call.exchange == 2 else script(call)) as server:
        run_job(job(CodingAgentConfig(agent=AgentConfig(wall_s=wall_s)), model(server, provider, retries=2), tmp_path))
        assert len(server.calls) == 2  # the hung call is not sent again: its retries would pass the clock
    evs = events(tmp_path)
    [end] = of(TrialFinished, evs)
    assert end.end == TrialEnd.BUDGET and "wall clock" in end.reason
    assert agent_s(evs) < wall_s + MARGIN_S  # before: 120 s, the hang
    cut = of(ModelCalled, evs)[-1]
    assert cut.error and "cut at the wall clock" in cut.error and cut.retries == 0
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.WORKSPACE and BlobStore(tmp_path / "blobs").get(final.source_blob) == ADD


def test_the_agent_time_of_earlier_attempts_counts_from_each_ones_first_call_sent():
    """Attempt 1 sent its first call at 9.0 s (logged at 10.0 s, 1.0 s in flight) and ended at
    30.0 s: 21 s. Attempt 2 replayed it, sent its first call at 44.5 s and ended at 50.0 s:
    5.5 s more. Attempt 3, killed during its replay, sent none: nothing more."""
    from kgb.agents.budget import agent_time_before
    from kgb.tracking.events import SessionStarted as Session
    from kgb.tracking.events import TrialStarted

    def started(ts: float, attempt: int) -> TrialStarted:
        return TrialStarted(job="j", ts=ts, op="aten::add", spec_version=1, sample=0, attempt=attempt)

    def called(ts: float, latency: float) -> ModelCalled:
        return ModelCalled(job="j", ts=ts, provider="p", model="m", request_hash="h", request_blob="h",
                           response_blob="r", latency_s=latency)

    def session(ts: float) -> Session:
        return Session(job="j", ts=ts, session=1, driver="loop", protocol="p", prompt_blob="b")

    assert agent_time_before([]) is None
    prior = [started(8.0, 0), session(8.5), called(10.0, 1.0), called(20.0, 2.0), session(30.0),
             started(40.0, 1), session(40.5), called(45.0, 0.5), session(50.0),
             started(60.0, 2), session(61.0)]
    assert agent_time_before(prior) == pytest.approx(21.0 + 5.5)
    assert agent_time_before(prior[:5]) == pytest.approx(21.0)


@pytest.mark.slow
def test_a_resumed_attempt_gets_only_the_wall_clock_its_earlier_attempt_left(tmp_path):
    """Attempt 1: the model takes 6 s to answer its first call (a kernel written), then holds
    its second, and the harness process is killed. Attempt 2 replays the first call at once and
    sends the second. Its clock reads attempt 1's 6 s and more from then on, so a second reply
    that takes 3 s runs into wall_s=8 and is cut (before, the resumed attempt's clock started
    at zero: the trial ended as done, with 6 s more than its budget)."""
    import os
    import signal

    from fake_llm_server import Hang
    from test_agents_run import SECRET as RUN_KEY
    from test_agents_run import kgb, logs

    from kgb.tracking.events import SessionFinished, TrialStarted

    attempt = [1]
    script = scripted({"agent": [Answer("", tools=(ToolCall("write_file", {"path": "kernel.py", "content": ADD}),)),
                                 done()]})

    def responder(call):
        if attempt[0] == 1 and call.exchange == 1:
            time.sleep(6)
        elif attempt[0] == 1:
            return Hang(120)
        elif call.exchange == 2:
            time.sleep(3)
        return script(call)

    with FakeLLMServer(responder, api_key=RUN_KEY) as server:
        proc = kgb(server, tmp_path, "method=claude_code", "method.agent.driver=loop", "method.agent.wall_s=8",
                   "tracking.mlflow=false", popen=True)
        assert server.hanging.wait(240), proc.communicate()[0]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        attempt[0] = 2
        kgb(server, tmp_path, "method=claude_code", "method.agent.driver=loop", "method.agent.wall_s=8",
            "tracking.mlflow=false")
    [evs] = logs(tmp_path).values()
    assert [e.attempt for e in evs if isinstance(e, TrialStarted)] == [1, 2]
    [session] = [e for e in evs if isinstance(e, SessionFinished)]  # attempt 1's never finished
    assert session.end.value == "budget" and "wall-clock budget reached during a model call" in session.reason
    [end] = of(TrialFinished, evs)
    assert end.end == TrialEnd.BUDGET
