"""The model layer's tool use: blocks and tools on the wire of each provider, replies
with tool calls, request hashes of tool-less requests unchanged, and replay of an agent
run from its log."""

from __future__ import annotations

import json

import pytest
from agent_script import ADD, check, done, scripted, write
from fake_llm_server import Answer, FakeLLMServer, ToolCall
from test_agents import SECRET, events, job, model, of

from kgb import models
from kgb.agents.config import CodingAgentConfig
from kgb.agents.tools import TOOLS
from kgb.config import ReplayConfig
from kgb.models.content import Text, ToolResult, ToolUse
from kgb.models.model import CallSite, Message, Request, StopReason
from kgb.run import run_job
from kgb.tracking.events import CandidateChecked, FinalKernelChosen, ModelCalled


def test_a_request_without_tools_hashes_as_before_tools_existed():
    request = Request("m", "sys", (Message("user", "hi"),), 0.0, 100)
    before = {"model": "m", "system": "sys", "messages": [{"role": "user", "content": "hi"}], "temperature": 0.0, "max_tokens": 100}
    assert request.text() == json.dumps(before, indent=1, sort_keys=True)
    assert "tools" in Request("m", "", (Message("user", "hi"),), 0.0, 100, TOOLS[:1]).text()


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_tool_calls_and_results_travel_in_each_providers_wire_format(provider, monkeypatch):
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    answer = Answer("Reading first.", tools=(ToolCall("read_file", {"path": "TASK.md"}), ToolCall("check", {})))
    with FakeLLMServer(lambda call: answer) as server:
        llm = models.build(model(server, provider, validate=False))
        reply = llm.provider.complete(Request("fake-model", "sys", (Message("user", "go"),), 0.0, 100, TOOLS), CallSite("op", 0, 0, 0))
        assert reply.stop_reason == StopReason.TOOL_USE and reply.text == "Reading first."
        assert [(u.name, u.input) for u in reply.tool_uses] == [("read_file", {"path": "TASK.md"}), ("check", {})]
        assert server.calls[0].tools == [t.name for t in TOOLS]
        history = (Message("user", "go"), Message("assistant", (Text("Reading first."), *reply.tool_uses)),
                   Message("user", (ToolResult(reply.tool_uses[0].id, "# Task"), ToolResult(reply.tool_uses[1].id, "status: rejected", True))))
        llm.provider.complete(Request("fake-model", "sys", history, 0.0, 100, TOOLS), CallSite("op", 0, 0, 1))
        sent = server.calls[1]
        assert sent.tool_results == ["# Task", "status: rejected"]
        assistant = next(m for m in sent.messages if m["role"] == "assistant")
        if provider == "anthropic":
            assert [b["type"] for b in assistant["content"]] == ["text", "tool_use", "tool_use"]
            assert sent.messages[2]["content"][1] == {"type": "tool_result", "tool_use_id": reply.tool_uses[1].id,
                                                      "content": "status: rejected", "is_error": True}
        else:
            assert assistant["content"] == "Reading first." and len(assistant["tool_calls"]) == 2
            assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"path": "TASK.md"}
            assert [m["role"] for m in sent.messages] == ["system", "user", "assistant", "tool", "tool"]


def test_openai_arguments_that_are_not_json_reach_the_tool_as_unparsed():
    from kgb.models.openai import reply_tool_uses

    [use] = reply_tool_uses({"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "run", "arguments": "{bad"}}]})
    assert use == ToolUse("c1", "run", {"_unparsed": "{bad"})


def test_an_agent_run_replays_from_its_log_without_a_server(tmp_path, monkeypatch):
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    with FakeLLMServer(scripted({"agent": [write(ADD), check(), done()]})) as server:
        run_job(job(CodingAgentConfig(), model(server, "anthropic"), tmp_path / "first"))
    replay = ReplayConfig(validate=False)
    setattr(replay, "from", str(tmp_path / "first"))
    summary = run_job(job(CodingAgentConfig(), replay, tmp_path / "again"))  # the server is gone
    first, again = events(tmp_path / "first"), events(tmp_path / "again")
    assert [c.request_hash for c in of(ModelCalled, again)] == [c.request_hash for c in of(ModelCalled, first)]
    assert sum(c.usage.total_tokens for c in of(ModelCalled, again)) == sum(c.usage.total_tokens for c in of(ModelCalled, first))
    assert [e.verdict.status for e in of(CandidateChecked, again)] == [e.verdict.status for e in of(CandidateChecked, first)]
    assert of(FinalKernelChosen, again)[0].rule == of(FinalKernelChosen, first)[0].rule
    assert summary.accuracy == 1.0 and summary.usage.cost_usd == 0.0
