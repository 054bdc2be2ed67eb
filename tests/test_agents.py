"""Agent methods end to end with agent.driver=loop against tests/fake_llm_server.py: the
scripted model writes, checks, fixes, and the harness's record (checks, final kernel and
its rule, verdict, tokens, budgets) is what the script implies. Kernels are judged for
real in the Triton interpreter, so each test keeps its checks few."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agent_script import ADD, NO_KERNEL_ADD, WRONG_ADD, check, done, scripted, write
from fake_llm_server import Answer, Fail, FakeLLMServer, ToolCall

from kgb.agents.config import AgentConfig, CodingAgentConfig
from kgb.config import (
    ChipConfig,
    Config,
    EvalConfig,
    LLMConfig,
    PriceConfig,
    SourceConfig,
    TrackingConfig,
)
from kgb.evaluate import Status
from kgb.run import run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateChecked,
    CandidateEvaluated,
    CandidateProposed,
    FinalKernelChosen,
    FinalRule,
    ModelCalled,
    SessionFinished,
    ToolCalled,
    TrialEnd,
    TrialFinished,
    WorkspaceSnapshotted,
)
from kgb.tracking.log import read_events

SECRET = "sk-ant-test-agent-0123456789-never-logged"


def model(server: FakeLLMServer, provider: str, **kw) -> LLMConfig:
    url = server.url if provider == "anthropic" else server.openai_url
    return LLMConfig(name="fake-model", provider=provider, base_url=url, api_key_env="KGB_TEST_KEY",
                     price=PriceConfig(input=1.0, output=10.0), **{"retries": 0, **kw})


def job(method, llm: LLMConfig, root: Path) -> Config:
    return Config(method=method, model=llm, source=SourceConfig("aten"), chip=ChipConfig(name="cpu", backend="cpu"),
                  eval=EvalConfig(cases="smoke"), tracking=TrackingConfig(root=str(root), mlflow=False), ops=["aten::add"])


def events(root: Path) -> list:
    return [e for p in root.glob("jobs/*/events.jsonl") for e in read_events(p)]


def of(kind, evs):
    return [e for e in evs if isinstance(e, kind)]


def no_secret_under(*roots: Path) -> None:
    leaks = [p for r in roots for p in r.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert leaks == []


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_write_check_fix_check_gives_the_best_check_as_final_kernel(provider, tmp_path, monkeypatch):
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    outside = tmp_path / "outside.py"
    seen: list[str] = []

    def read_wrong_result(call):
        seen.append(call.tool_results[0])
        return Answer("Outside too.", tools=(ToolCall("write_file", {"path": str(outside), "content": "x = 1\n"}),
                                            ToolCall("edit_file", {"path": "kernel.py", "old": "r = a - alpha * b",
                                                                   "new": "r = a + alpha * b"})), input=300, output=40)

    script = {"agent": [write(WRONG_ADD, input=200, output=900), check(input=250, output=10), read_wrong_result,
                  check(input=400, output=10), done(input=500, output=20)]}
    with FakeLLMServer(scripted(script), api_key=SECRET) as server:
        summary = run_job(job(CodingAgentConfig(), model(server, provider), tmp_path / "out"))
        tokens = sum(c.turn.input + c.turn.output for c in server.answered)
    assert "status: wrong_output" in seen[0] and "correct: no" in seen[0] and "tests: " in seen[0]
    evs = events(tmp_path / "out")
    checks = of(CandidateChecked, evs)
    assert [c.verdict.status for c in checks] == [Status.WRONG_OUTPUT, Status.CORRECT]
    tools = of(ToolCalled, evs)
    assert [(t.tool, t.is_error) for t in tools] == [("write_file", False), ("check", False), ("write_file", True),
                                                     ("edit_file", False), ("check", False)]
    assert [c.call_id for c in checks] == [tools[1].call_id, tools[4].call_id]
    assert not outside.exists()  # the write outside the workspace was refused
    proposed = {e.candidate: e for e in of(CandidateProposed, evs)}
    assert proposed[checks[1].candidate].produced_by == tools[4].call_id
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.BEST_CHECK and final.checked == checks[1].candidate
    [judged] = of(CandidateEvaluated, evs)
    assert judged.verdict.status == Status.CORRECT and proposed[judged.candidate].parents == (checks[1].candidate,)
    calls = of(ModelCalled, evs)
    assert len(calls) == 5 and sum(c.usage.total_tokens for c in calls) == tokens == 2630
    assert summary.accuracy == 1.0 and summary.usage.total_tokens == tokens
    [end] = of(TrialFinished, evs)
    assert end.end == TrialEnd.COMPLETED
    snaps = of(WorkspaceSnapshotted, evs)
    manifest = json.loads(BlobStore(tmp_path / "out" / "blobs").get(snaps[-1].manifest_blob))
    assert {"TASK.md", "PROTOCOL.md", "kernel.py", "check"} <= set(manifest)
    assert BlobStore(tmp_path / "out" / "blobs").get(manifest["kernel.py"]) == ADD
    no_secret_under(tmp_path)


def test_a_turn_budget_ends_the_trial_and_the_workspace_kernel_is_salvaged(tmp_path, monkeypatch):
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    script = {"agent": [write(NO_KERNEL_ADD), write(ADD), check(), done()]}
    method = CodingAgentConfig(agent=AgentConfig(max_turns=2))
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(method, model(server, "anthropic"), tmp_path))
        assert len(server.calls) == 2
    evs = events(tmp_path)
    assert of(CandidateChecked, evs) == []
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.WORKSPACE and "no check" in final.reason
    [judged] = of(CandidateEvaluated, evs)
    assert judged.verdict.status == Status.CORRECT
    [end] = of(TrialFinished, evs)
    assert end.end == TrialEnd.BUDGET and end.reason == "agent turn budget reached: 2 of 2 turns"
    assert [s.end.value for s in of(SessionFinished, evs)] == ["budget"]


def test_a_provider_down_ends_the_agent_trial_as_infra_error_and_the_next_run_goes_on(tmp_path, monkeypatch):
    """A provider down through its retries is the machine's failure, not the agent's: the
    trial is no result (not a no_candidate counted against the method), and the next run
    answers the calls already made from the log and pays only for the rest."""
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    steps = [write(ADD, input=100, output=50), check(input=120, output=10), done(input=130, output=20)]
    up = scripted({"agent": steps})
    down = [True]  # the second call finds the provider down, once
    with FakeLLMServer(lambda call: Fail(503) if call.exchange == 2 and down and down.pop() else up(call)) as server:
        run_job(job(CodingAgentConfig(), model(server, "anthropic"), tmp_path))
        evs = events(tmp_path)
        [end] = of(TrialFinished, evs)
        assert end.end == TrialEnd.INFRA_ERROR and "503" in end.reason
        assert [s.end.value for s in of(SessionFinished, evs)] == ["error"]  # the session's record is kept
        assert of(CandidateEvaluated, evs) == []
        summary = run_job(job(CodingAgentConfig(), model(server, "anthropic"), tmp_path))
        assert [c.exchange for c in server.calls] == [1, 2, 2, 3]  # the first call came from the log
    assert summary.accuracy == 1.0
    assert [e.end for e in of(TrialFinished, events(tmp_path))] == [TrialEnd.INFRA_ERROR, TrialEnd.COMPLETED]


@pytest.mark.parametrize(("limit", "says"), [
    (dict(max_turns=0), "method.agent.max_turns=0: model calls per trial: give 1 or more"),
    (dict(wall_s=0), "method.agent.wall_s=0: seconds per trial: give a positive number"),
    (dict(max_checks=-1), "method.agent.max_checks=-1: check-tool calls per trial: give 0 or more"),
    (dict(max_tokens=0), "method.agent.max_tokens=0: tokens per trial: give 1 or more, or null for no limit"),
    (dict(max_cost_usd=-1.0), "method.agent.max_cost_usd=-1: dollars per trial: give a positive number, or null for no limit"),
    (dict(command_timeout_s=-5), "method.agent.command_timeout_s=-5: seconds per command: give a positive number"),
    (dict(output_chars=0), "method.agent.output_chars=0: characters of output the agent is shown: give 1 or more"),
])
def test_a_budget_no_trial_could_work_under_fails_the_job_before_any_trial(limit, says):
    """`method.agent.max_turns=0` ran every trial to a no_candidate or budget end that counted
    as the method's failure, with no model call made."""
    from kgb.methods.coding_agent import CodingAgent

    with pytest.raises(ValueError) as e:
        CodingAgent(CodingAgentConfig(agent=AgentConfig(**limit)))
    assert str(e.value) == says


def test_a_baseline_folder_with_no_run_fails_the_job_before_any_trial(tmp_path):
    """A misspelt `method.baseline` ended every trial as method_error, counted as the method's
    failure, after the sweep had started."""
    from kgb.methods.coding_agent import CodingAgent

    with pytest.raises(ValueError) as e:
        CodingAgent(CodingAgentConfig(baseline=str(tmp_path / "nowhere")))
    assert str(e.value) == (f"method.baseline={tmp_path / 'nowhere'}: no event logs under {tmp_path / 'nowhere'}/jobs/ "
                            "(give a run's tracking.root)")


def test_answer_mode_takes_the_fenced_block_of_a_reply_without_tools(tmp_path, monkeypatch):
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    with FakeLLMServer(scripted({"agent": [done(f"Here:\n```python\n{ADD}```\n")]})) as server:
        run_job(job(CodingAgentConfig(mode="answer"), model(server, "openai"), tmp_path))
        assert server.calls[0].tools == []
    evs = events(tmp_path)
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.FENCED_BLOCK
    assert [e.verdict.status for e in of(CandidateEvaluated, evs)] == [Status.CORRECT]


def test_the_check_command_reaches_the_harness_and_a_forged_request_is_refused(tmp_path, monkeypatch):
    """./check inside a `run` goes through the trial's check server and is linked to that
    call; a request without the trial's ticket is refused; a command sees no key."""
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    outputs: list[str] = []
    forge = ("python -c \"import json,os,socket; s=socket.socket(socket.AF_UNIX); s.connect(os.environ['KGB_CHECK_SOCKET']); "
             "s.sendall(json.dumps({'ticket': 'guess', 'file': 'kernel.py'}).encode()+b'\\n'); print(s.makefile().readline())\"")

    def run(command: str):
        def step(call):
            outputs.extend(call.tool_results)
            return Answer("", tools=(ToolCall("run", {"command": command}),))
        return step

    script = {"agent": [write(NO_KERNEL_ADD), run("./check --json; echo rc=$?"), run(forge), run("env"),
                        lambda call: outputs.extend(call.tool_results) or done()]}
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(CodingAgentConfig(), model(server, "anthropic"), tmp_path))
    wrote, checked, forged, env = outputs
    assert wrote.startswith("wrote ")
    report = json.loads(checked.split("\n", 1)[1].rsplit("rc=", 1)[0])
    assert report["status"] == "rejected" and report["compiled"] is False and "triton" in report["error"].lower()
    assert checked.strip().endswith("rc=1")
    assert "does not come from this trial's workspace" in forged
    assert "KGB_TEST_KEY" not in env and SECRET not in env and "HOME=/tmp/kgb-agent-" in env
    evs = events(tmp_path)
    [c] = of(CandidateChecked, evs)
    runs = [t for t in of(ToolCalled, evs) if t.tool == "run"]
    assert c.call_id == runs[0].call_id  # the forged request made no check
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.WORKSPACE


def test_golden_v2_log_reads_and_folds_into_an_agent_view():
    from kgb.agents.projection import agent_view
    from kgb.tracking.projections import TrialStatus, trial_outcomes

    events = read_events(Path(__file__).parent / "golden" / "events-v2-agent.jsonl")
    [trial] = trial_outcomes(events).values()
    assert trial.status == TrialStatus.CORRECT and len(trial.calls) == 5
    view = agent_view(trial.events)
    assert view is not None and view.final is not None and view.final.rule == FinalRule.BEST_CHECK
    assert [(c.status, c.correct) for c in view.checks] == [("wrong_output", False), ("correct", True)]
    assert view.metrics() == {"agent_sessions": 1, "agent_turns": 5, "agent_tool_calls": 5, "agent_checks": 2,
                              "agent_checks_correct": 1}
    assert view.history() == [("check_correct", 0.0, 1), ("check_correct", 1.0, 2)]


@pytest.mark.parametrize(("limits", "reason", "calls"), [
    # 8 s: under a loaded machine (the suite on parallel workers) the workspace and the first
    # check took all of a 3 s clock before the command that sleeps past it ran
    (dict(wall_s=8.0, command_timeout_s=60.0), "agent wall clock reached: 8 s", 3),
    (dict(max_checks=1), "agent check budget reached: 1 of 1 checks", 4),
    (dict(max_tokens=400), "agent token budget reached: 550 of 400 tokens used", 3),
])
def test_each_budget_ends_the_trial_with_its_reason_and_salvages_the_work(limits, reason, calls, tmp_path, monkeypatch):
    """write, check, a command that sleeps past the wall clock (killed with its process
    group), check again, ...: each budget stops a different step."""
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    script = {"agent": [write(NO_KERNEL_ADD, input=100, output=50), check(input=100, output=50),
                        Answer("", tools=(ToolCall("run", {"command": "sleep 30; echo late"}),), input=200, output=50),
                        check(input=100, output=50), done()]}
    with FakeLLMServer(scripted(script)) as server:
        run_job(job(CodingAgentConfig(agent=AgentConfig(**limits)), model(server, "anthropic"), tmp_path))
        assert len(server.calls) == calls
    evs = events(tmp_path)
    [end] = of(TrialFinished, evs)
    assert (end.end, end.reason) == (TrialEnd.BUDGET, reason)
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.WORKSPACE  # the work is salvaged and judged
    assert [e.verdict.status for e in of(CandidateEvaluated, evs)] == [Status.REJECTED]
    runs = [t for t in of(ToolCalled, evs) if t.tool == "run"]
    if "wall_s" in limits:  # the sleeping command was killed at the wall clock, not after 30 s
        assert runs[0].duration_s < 20
        assert BlobStore(tmp_path / "blobs").get(runs[0].result_blob).startswith("killed after")
    if "max_checks" in limits:
        refused = BlobStore(tmp_path / "blobs").get(of(ToolCalled, evs)[-1].result_blob)
        assert refused == f"check refused: {reason}" and len(of(CandidateChecked, evs)) == 1


def test_workspace_paths_cannot_leave_it_by_dots_absolute_paths_symlinks_or_git(tmp_path):
    from kgb import operators
    from kgb.agents.workspace import OutsideWorkspace, Workspace

    ws = Workspace.create(operators.load("aten::add").problem(), "protocol", "", "cpu")
    try:
        (ws.root / "link").symlink_to(tmp_path)
        for path in ("../x.py", str(tmp_path / "x.py"), "link/x.py", ".git/config", "/etc/passwd"):
            with pytest.raises(OutsideWorkspace):
                ws.resolve(path)
        assert ws.resolve("notes/a.md") == ws.root / "notes" / "a.md"
        assert ws.resolve(str(ws.root / "kernel.py")) == ws.kernel
        env = ws.env("ticket")
        assert env["HOME"] == str(ws.home) and not any("KEY" in k for k in env)
    finally:
        ws.remove()
    assert not ws.trial_dir.exists()
