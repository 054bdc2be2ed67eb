"""Opt-in: the real Claude Code and OpenCode CLIs through a full tool loop against the local
fake model server (through kgb's proxy), judged for real in the Triton interpreter.

Skipped unless KGB_REAL_CLI=1. The CLIs come from an npm prefix (KGB_NPM_PREFIX, default
~/.cache/kgb/npm): `npm install --prefix ~/.cache/kgb/npm @anthropic-ai/claude-code opencode-ai`.
No network beyond 127.0.0.1 is used: the model is tests/fake_llm_server.py, scripted to
read, write (a wrong kernel), check, edit (the fix), check again and stop, with each CLI's
own tool names and arguments.
"""

from __future__ import annotations

import json
import os

import pytest
from agent_script import ADD, WRONG_ADD
from fake_llm_server import Answer, Call, FakeLLMServer, ToolCall
from test_agents import SECRET, events, job, model, no_secret_under, of

from kgb.agents.config import AgentConfig, CodingAgentConfig
from kgb.evaluate import Status
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
)

pytestmark = pytest.mark.skipif(os.environ.get("KGB_REAL_CLI") != "1",
                                reason="runs the real claude and opencode CLIs: set KGB_REAL_CLI=1 (and KGB_NPM_PREFIX)")

WRONG, RIGHT = "r = a - alpha * b", "r = a + alpha * b"
TOOLS = {  # each CLI's own tool names and argument names
    "claude": {"read": ("Read", {"file_path": "kernel.py"}), "write": ("Write", {"file_path": "kernel.py", "content": WRONG_ADD}),
               "edit": ("Edit", {"file_path": "kernel.py", "old_string": WRONG, "new_string": RIGHT}),
               "check": ("Bash", {"command": "./check", "description": "check the kernel"})},
    "opencode": {"read": ("read", {"filePath": "kernel.py"}), "write": ("write", {"filePath": "kernel.py", "content": WRONG_ADD}),
                 "edit": ("edit", {"filePath": "kernel.py", "oldString": WRONG, "newString": RIGHT}),
                 "check": ("bash", {"command": "./check", "description": "check the kernel"})},
}


def script(driver: str):
    def step(*names: str, **tokens: int) -> Answer:
        return Answer(f"Next: {', '.join(names)}.", tools=tuple(ToolCall(*TOOLS[driver][n]) for n in names), **tokens)

    steps = [step("read", "write", input=3000, output=900), step("check", input=4000, output=30),
             step("read", "edit", input=5000, output=60), step("check", input=6000, output=30),
             Answer("kernel.py adds with one Triton kernel and passes the check.", input=7000, output=20)]
    seen: list[Call] = []

    def respond(call: Call) -> Answer:
        seen.append(call)
        if not call.tools:  # a side call of the CLI (a session title)
            return Answer("Triton add", input=50, output=5)
        return steps[min(call.exchange, len(steps)) - 1]
    return respond, seen


@pytest.mark.parametrize(("driver", "provider"), [("claude", "anthropic"), ("opencode", "openai")])
def test_the_real_cli_writes_checks_fixes_and_is_judged(driver, provider, tmp_path, monkeypatch):
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    monkeypatch.setenv("HOME", str(tmp_path / "user-home"))
    (tmp_path / "user-home").mkdir()
    respond, seen = script(driver)
    method = CodingAgentConfig(name="claude_code" if driver == "claude" else "opencode",
                               agent=AgentConfig(driver=driver, wall_s=300))
    with FakeLLMServer(respond, api_key=SECRET) as server:
        summary = run_job(job(method, model(server, provider), tmp_path / "out"))
        served = sum(c.turn.input + c.turn.output for c in server.answered)
    root = tmp_path / "out"
    evs = events(root)
    blobs = BlobStore(root / "blobs")
    [session] = of(SessionFinished, evs)
    report = json.loads(blobs.get(session.cli_report_blob))
    tools = [(t.tool, t.is_error) for t in of(ToolCalled, evs)]
    checks = [c.verdict.status for c in of(CandidateChecked, evs)]
    print(f"\n{driver} {report['version']}: session {session.end.value} ({session.reason}); tools {tools}; "
          f"checks {[s.value for s in checks]}; model calls {len(server.answered)} ({len(seen) - sum(bool(c.tools) for c in seen)} "
          f"without tools); tokens served {served}, kgb {summary.usage.total_tokens}, the CLI's report "
          f"{report['cli_tokens']['input_tokens'] + report['cli_tokens']['output_tokens']} (agree: {report['agree']})")
    assert session.end.value == "done"
    assert checks == [Status.WRONG_OUTPUT, Status.CORRECT]
    [final] = of(FinalKernelChosen, evs)
    assert final.rule == FinalRule.BEST_CHECK
    [judged] = of(CandidateEvaluated, evs)
    assert judged.verdict.status == Status.CORRECT and blobs.get(final.source_blob) == ADD
    assert sum(c.usage.total_tokens for c in of(ModelCalled, evs)) == served == summary.usage.total_tokens
    assert list((tmp_path / "user-home").iterdir()) == []
    no_secret_under(tmp_path)
