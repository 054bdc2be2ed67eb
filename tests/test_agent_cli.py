"""The claude and opencode drivers end to end, with a fake `claude` and a fake `opencode`
(tests/fake_cli.py) on PATH: real processes that write each CLI's event stream and make
real HTTP model calls, through kgb's model proxy, to tests/fake_llm_server.py.

The judge is the timed fake of tests/test_agent_methods.py (a speed read from the
candidate), so that a regression after the best can be told from the best on the CPU."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from fake_llm_server import Answer, Call, Fail, FakeLLMServer, ToolCall
from test_agent_methods import at, files, timed_judge
from test_agents import SECRET, events, job, model, no_secret_under, of

from kgb.agents.config import AgentConfig, CodingAgentConfig
from kgb.evaluate import Status
from kgb.evaluate.sandbox import landlock_abi
from kgb.methods.coding_agent import CodingAgent
from kgb.run import run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateChecked,
    CandidateEvaluated,
    FinalKernelChosen,
    FinalRule,
    ModelCalled,
    SessionFinished,
    ToolCalled,
    TrialEnd,
    TrialFinished,
    TurnTaken,
)

FAKE = Path(__file__).parent / "fake_cli.py"


@pytest.fixture(autouse=True)
def fake_clis(tmp_path, monkeypatch):
    install_fake_clis(tmp_path, monkeypatch)


def install_fake_clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fakes on PATH, the timed judge, the key, and a user HOME that must stay empty."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / FAKE.name  # beside the executables: the sandbox lets the CLI read its own install only
    fake.write_text(FAKE.read_text())
    for name in ("claude", "opencode"):
        exe = bin_dir / name
        exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{fake}" {name} "$@"\n')
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    (tmp_path / "user-home").mkdir()
    monkeypatch.setattr("kgb.agents.checks.evaluate", timed_judge)
    monkeypatch.setattr("kgb.trial.evaluate", timed_judge)
    # with the judge faked no engine is needed, and the job would start one ahead (3 s of a
    # core) for every test: this HOME and PATH are the test's own, and an engine is kept per
    # environment
    monkeypatch.setattr("kgb.run.start_engine", lambda settings: None)
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)


def write(driver: str, source: str, **tokens: int) -> Answer:
    if driver == "claude":  # Claude Code overwrites only a file it has read
        calls = (ToolCall("Read", {"file_path": "kernel.py"}), ToolCall("Write", {"file_path": "kernel.py", "content": source}))
    else:
        calls = (ToolCall("write", {"filePath": "kernel.py", "content": source}),)
    return Answer("I write kernel.py.", tools=calls, **tokens)


def bash(driver: str, command: str, **tokens: int) -> Answer:
    return Answer("", tools=(ToolCall("Bash" if driver == "claude" else "bash", {"command": command, "description": "run"}),),
                  **tokens)


TITLE = Answer("Triton add", input=30, output=4)


def agent(steps: list[Answer], title: Answer = TITLE):
    """A model that answers a session's calls in order; a call without tools (OpenCode's
    title) gets `title`."""
    def respond(call: Call) -> Answer | Fail:
        if not call.tools:
            return title
        return steps[min(call.exchange, len(steps)) - 1]
    return respond


def report(root: Path, evs) -> dict:
    [session] = of(SessionFinished, evs)
    return json.loads(BlobStore(root / "blobs").get(session.cli_report_blob))


def trial_job(driver: str, provider: str, server: FakeLLMServer, root: Path, **agent_cfg):
    method = CodingAgentConfig(name="claude_code" if driver == "claude" else "opencode",
                               agent=AgentConfig(driver=driver, **agent_cfg))
    return job(method, model(server, provider), root)


@pytest.mark.parametrize(("driver", "provider"), [("claude", "anthropic"), ("opencode", "openai"), ("claude", "openai")])
def test_a_regression_after_the_best_keeps_the_best_check_and_every_token_is_counted(driver, provider, tmp_path):
    dialect = "autokernel" if driver == "claude" else "ako"
    steps: list[Answer] = []
    with FakeLLMServer(agent(steps), api_key=SECRET) as server:
        port = server.url.rsplit(":", 1)[1]  # the real endpoint: the CLI's commands must not reach it
        reach = f"python3 -c 'import socket; print(socket.socket().connect_ex((\"127.0.0.1\", {port})))' > reach.txt"
        steps += [write(driver, at(1.5), input=900, output=400), bash(driver, "./check", input=1000, output=20),
                  write(driver, at(1.1), input=1100, output=400),
                  bash(driver, f"./check --format {dialect}; env > cli-env.txt; find $HOME -type f > home.txt; {reach}",
                       input=1200, output=30),
                  Answer("kernel.py is done.", input=1300, output=10)]
        summary = run_job(trial_job(driver, provider, server, tmp_path / "out"))
        served = sum(c.turn.input + c.turn.output for c in server.answered)
        titles = sum(c.turn.input + c.turn.output for c in server.answered if not c.tools)
    root = tmp_path / "out"
    evs = events(root)
    checks = of(CandidateChecked, evs)
    assert [round(c.verdict.speedup, 3) for c in checks] == [1.5, 1.1]
    [final] = of(FinalKernelChosen, evs)
    assert (final.rule, final.checked) == (FinalRule.BEST_CHECK, checks[0].candidate)
    [judged] = of(CandidateEvaluated, evs)
    assert judged.verdict.status == Status.CORRECT and round(judged.verdict.speedup, 3) == 1.5
    workspace = files(root, evs)
    assert workspace["kernel.py"] == at(1.1)  # the regression stays in the workspace, the best is judged
    tools = of(ToolCalled, evs)  # each once, however often the CLI's stream repeats a message
    names = ["Read", "Write", "Bash"] * 2 if driver == "claude" else ["write", "bash"] * 2
    assert [t.tool for t in tools] == names
    runs = [t for t in tools if t.tool.lower() == "bash"]
    assert [c.call_id for c in checks] == [t.call_id for t in runs]
    shown = BlobStore(root / "blobs").get(runs[1].result_blob)  # the second check, in the dialect asked for
    assert ("speedup_vs_pytorch: 1.100x" if driver == "claude" else "SPEEDUP: 1.100") in shown
    assert len(of(TurnTaken, evs)) == len(of(ModelCalled, evs)) == len(server.answered) == 5 + (titles > 0)
    assert sum(c.usage.total_tokens for c in of(ModelCalled, evs)) == served == summary.usage.total_tokens
    from kgb.agents.projection import agent_view

    artifacts = agent_view(evs).artifacts(BlobStore(root / "blobs"))
    stream = [json.loads(line) for line in artifacts["agent/cli/session-1-stream.jsonl"].splitlines()]
    assert stream[-1]["type"] == ("result" if driver == "claude" else "step_finish")
    assert '"cli_tokens"' in artifacts["agent/cli/session-1-report.json"]
    cli = report(root, evs)
    assert cli["kgb_tokens"]["input_tokens"] + cli["kgb_tokens"]["output_tokens"] == served
    # Claude Code's result sums what it was sent; OpenCode's steps leave out its title call
    cli_total = cli["cli_tokens"]["input_tokens"] + cli["cli_tokens"]["output_tokens"]
    assert cli_total == served - titles and cli["agree"] == (titles == 0) and cli["cli_calls"] == 5
    env = dict(line.split("=", 1) for line in workspace["cli-env.txt"].splitlines() if "=" in line)
    assert env["HOME"].startswith(("/tmp/kgb-agent-", os.path.realpath("/tmp") + "/kgb-agent-"))
    assert not any(SECRET in v for v in env.values()) and "KGB_TEST_KEY" not in env
    home_files = workspace["home.txt"].splitlines()
    assert home_files and all(f.startswith(env["HOME"]) for f in home_files)  # the CLI's own files, in the trial's home
    assert list((tmp_path / "user-home").iterdir()) == []
    if landlock_abi() >= 4:  # the sandbox allows TCP to the proxy's port alone
        assert workspace["reach.txt"].strip() not in ("", "0")
    no_secret_under(tmp_path)


def test_a_hanging_command_is_killed_with_the_cli_at_the_wall_clock(tmp_path):
    steps = [write("claude", at(1.2)), bash("claude", "sleep 37.25"), Answer("never asked")]
    started = time.perf_counter()
    with FakeLLMServer(agent(steps)) as server:
        # long enough for the CLI to start and make its two calls on a loaded 2-core machine (at
        # 6 s, under a load of 8, it made none in time: session 45)
        run_job(trial_job("claude", "anthropic", server, tmp_path, wall_s=12.0))
        assert len(server.calls) == 2
    assert time.perf_counter() - started < 30
    evs = events(tmp_path)
    [end] = of(TrialFinished, evs)
    assert (end.end, end.reason) == (TrialEnd.BUDGET, "agent wall clock reached: 12 s")
    [session] = of(SessionFinished, evs)
    assert session.end.value == "budget"
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.WORKSPACE  # salvaged: no check was made
    assert [round(e.verdict.speedup, 3) for e in of(CandidateEvaluated, evs)] == [1.2]
    assert report(tmp_path, evs)["unfinished_tools"] != []  # the killed command never returned
    sleeping = [p for p in Path("/proc").glob("[0-9]*/cmdline") if b"37.25" in _read(p)]
    assert sleeping == []  # the CLI's whole process group was killed


def test_a_cli_whose_commands_fill_the_trial_folder_past_its_bound_is_ended_and_its_files_taken_back(
        tmp_path, monkeypatch):
    """The CLI runs its commands itself, not through the harness's run_command: the session as
    a whole is watched (kgb.evaluate.disk_bound), ended past the bound, and what it wrote taken
    back; the kernel written before it is still judged."""
    from kgb.evaluate import disk_bound

    monkeypatch.setattr(disk_bound, "COMMAND_DISK_BYTES", 64 << 20)
    fill = "for i in $(seq 20); do head -c 20M /dev/zero > fill-$i || exit 1; done; echo filled; sleep 30"
    steps = [write("claude", at(1.2)), bash("claude", fill), Answer("never asked")]
    with FakeLLMServer(agent(steps)) as server:
        run_job(trial_job("claude", "anthropic", server, tmp_path, wall_s=60.0))
    evs = events(tmp_path)
    [session] = of(SessionFinished, evs)
    assert session.end.value == "error", session.reason
    assert "past its bound of 64.0 MiB" in session.reason and "fill-" in session.reason, session.reason
    assert [round(e.verdict.speedup, 3) for e in of(CandidateEvaluated, evs)] == [1.2]  # salvaged
    workspace = files(tmp_path, evs)
    assert sum(len(v) for k, v in workspace.items() if k.startswith("fill-")) <= 64 << 20


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


@pytest.mark.parametrize(("driver", "provider"), [("claude", "anthropic"), ("opencode", "openai")])
def test_a_failed_model_call_ends_the_session_as_an_error_and_the_cli_says_so(driver, provider, tmp_path):
    steps = [write(driver, at(1.3)), Fail(400, message="context window exceeded")]
    with FakeLLMServer(agent(steps)) as server:  # type: ignore[arg-type]
        run_job(trial_job(driver, provider, server, tmp_path))
    evs = events(tmp_path)
    [session] = of(SessionFinished, evs)
    assert session.end.value == "error" and "HTTP 400" in session.reason
    cli = report(tmp_path, evs)
    assert cli["cli_error"] and "400" in cli["cli_error"]
    assert [c.error is not None for c in of(ModelCalled, evs)][-1]
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.WORKSPACE
    [end] = of(TrialFinished, evs)
    assert end.end == TrialEnd.COMPLETED


@pytest.mark.parametrize("driver", ["claude", "opencode"])
def test_a_provider_down_ends_the_cli_session_and_the_trial_as_infra_error(driver, tmp_path):
    """Unlike a refused request (400, above), an outage is no verdict on the agent: the work it
    left is not judged, and the next run retries the trial."""
    steps = [write(driver, at(1.3)), Fail(503)]
    with FakeLLMServer(agent(steps)) as server:  # type: ignore[arg-type]
        run_job(trial_job(driver, "anthropic" if driver == "claude" else "openai", server, tmp_path))
    evs = events(tmp_path)
    [session] = of(SessionFinished, evs)
    assert session.end.value == "error" and "HTTP 503" in session.reason
    assert of(FinalKernelChosen, evs) == [] and of(CandidateEvaluated, evs) == []
    [end] = of(TrialFinished, evs)
    assert end.end == TrialEnd.INFRA_ERROR


@pytest.mark.parametrize(("driver", "limits", "reason"), [
    ("opencode", dict(max_checks=1), "agent check budget reached: 1 of 1 checks"),
    ("claude", dict(max_turns=2), "agent turn budget reached: 2 of 2 turns"),
    ("claude", dict(max_tokens=600), "agent token budget reached: 600 of 600 tokens used"),
])
def test_each_budget_kills_the_cli_and_the_work_is_salvaged(driver, limits, reason, tmp_path):
    steps = [write(driver, at(1.0), input=250, output=50), bash(driver, "./check", input=250, output=50),
             bash(driver, "./check", input=250, output=50), bash(driver, "./check"), Answer("done")]
    with FakeLLMServer(agent(steps, title=Answer("t", input=1, output=1))) as server:
        run_job(trial_job(driver, "openai" if driver == "opencode" else "anthropic", server, tmp_path, **limits))
    evs = events(tmp_path)
    [end] = of(TrialFinished, evs)
    assert (end.end, end.reason) == (TrialEnd.BUDGET, reason)
    assert of(SessionFinished, evs)[0].end.value == "budget"
    assert of(FinalKernelChosen, evs)[0].rule in (FinalRule.BEST_CHECK, FinalRule.WORKSPACE)
    assert [e.verdict.status for e in of(CandidateEvaluated, evs)] == [Status.CORRECT]


@pytest.mark.parametrize(("driver", "provider"), [("claude", "anthropic"), ("opencode", "openai")])
def test_answer_mode_offers_the_model_no_tools_and_takes_the_fenced_block(driver, provider, tmp_path):
    """One turn without tools; OpenCode's title call comes on top, and is not that turn."""
    from agent_script import ADD

    with FakeLLMServer(lambda call: Answer(f"Here:\n```python\n{ADD}```\n")) as server:
        run_job(job(CodingAgentConfig(mode="answer", agent=AgentConfig(driver=driver)), model(server, provider), tmp_path))
        assert [c.body.get("tools") for c in server.calls] == [None] * (1 if driver == "claude" else 2)
    evs = events(tmp_path)
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.FENCED_BLOCK and of(SessionFinished, evs)[0].end.value == "done"


def test_a_missing_cli_fails_the_job_before_any_trial_and_says_how_to_install_it(tmp_path, monkeypatch):
    from kgb.agents import cli

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setattr(cli, "NPM_PREFIX", tmp_path / "npm")
    with pytest.raises(ValueError, match=r"no `opencode` on PATH .*`npm install --prefix .*opencode-ai`"):
        CodingAgent(CodingAgentConfig(agent=AgentConfig(driver="opencode")))


@pytest.mark.parametrize(("method", "driver"), [("claude_code", "claude"), ("opencode", "opencode")])
def test_each_cli_method_is_run_by_its_own_cli_and_a_loop_run_is_labelled_so(method, driver):
    """`method=claude_code` and `method=opencode` were both kgb's loop by default (session 50's
    user walk): two names for one agent, whose rows a user would read as Claude Code against
    OpenCode. Now each runs its CLI, and the loop, asked for, shows in the method's label."""
    from test_models import compose_job

    from kgb.method_params import method_params

    cfg = compose_job(f"method={method}", "model=anthropic", "model.name=some-model")
    assert cfg.method.agent.driver == driver
    assert method_params(cfg.method.identity()) == ""
    looped = compose_job(f"method={method}", "method.agent.driver=loop", "model=anthropic", "model.name=some-model")
    assert method_params(looped.method.identity()) == "agent.driver=loop"


@pytest.mark.slow
def test_a_killed_cli_trial_resumes_without_paying_twice_though_its_path_is_new(tmp_path):
    """The claude CLI names its working directory in its system prompt and absolute paths in
    its tools' results, and the model answers with absolute paths. The trial's folder is new
    for each attempt, so a resumed attempt's requests never matched the logged ones and every
    call was paid again (session 50's user walk). The log now holds the folder as TRIAL_DIR:
    the re-run answers the first two calls from the log, the reply's write lands in this
    attempt's workspace, and only the held third call is sent again."""
    import re
    import signal

    from agent_script import ADD
    from fake_llm_server import Hang
    from test_agents_run import SECRET as RUN_KEY
    from test_agents_run import kgb, logs

    from kgb.models.model import TODAY_ISO, TRIAL_DIR
    from kgb.tracking.events import TrialStarted

    def responder(call: Call):
        workspace = re.search(r"Working directory: (\S+)", call.prompt).group(1)
        kernel = f"{workspace}/kernel.py"
        if call.exchange == 1:
            return Answer("", tools=(ToolCall("Read", {"file_path": kernel}),
                                     ToolCall("Write", {"file_path": kernel, "content": ADD})))
        if call.exchange == 2:
            return Answer("", tools=(ToolCall("Bash", {"command": f"ls {workspace}", "description": "look"}),))
        if not any(isinstance(c.turn, Hang) for c in server.calls):
            return Hang(120)
        return Answer("Done.")

    with FakeLLMServer(responder, api_key=RUN_KEY) as server:
        overrides = ("method=claude_code", "tracking.mlflow=false")
        proc = kgb(server, tmp_path, *overrides, popen=True)
        assert server.hanging.wait(240), proc.communicate()[0]
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        kgb(server, tmp_path, *overrides)
        assert [c.exchange for c in server.calls] == [1, 2, 3, 3]  # before: 1, 2, 3, 1, 2, 3
    [evs] = logs(tmp_path).values()
    assert [e.attempt for e in evs if isinstance(e, TrialStarted)] == [1, 2]
    blobs = BlobStore(tmp_path / "blobs")
    first = blobs.get(of(ModelCalled, evs)[0].request_blob)
    assert f"Working directory: {TRIAL_DIR}/workspace" in first and "kgb-agent-" not in first
    assert f"Today's date: {TODAY_ISO}" in first  # a resume on another day matches too
    [judged] = of(CandidateEvaluated, evs)
    assert judged.verdict.status == Status.CORRECT, judged.verdict.message


def test_a_model_reply_in_flight_at_the_wall_clock_is_cut_with_the_cli(tmp_path):
    """The CLI's second call hangs at the model. The proxy's call is cut at the wall clock
    (before, it held the proxy and the trial for model.timeout_s), the CLI is told so and
    ended, and the kernel it wrote is salvaged."""
    from fake_llm_server import Hang

    steps = [write("claude", at(1.2)), Hang(120)]
    started = time.perf_counter()
    with FakeLLMServer(agent(steps)) as server:
        run_job(trial_job("claude", "anthropic", server, tmp_path, wall_s=12.0))
        assert len(server.calls) == 2
    assert time.perf_counter() - started < 60  # before: the hang's 120 s
    evs = events(tmp_path)
    [end] = of(TrialFinished, evs)
    assert end.end == TrialEnd.BUDGET and "wall clock" in end.reason
    cut = of(ModelCalled, evs)[-1]
    assert cut.error and "cut at the wall clock" in cut.error
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.WORKSPACE
    assert [round(e.verdict.speedup, 3) for e in of(CandidateEvaluated, evs)] == [1.2]
