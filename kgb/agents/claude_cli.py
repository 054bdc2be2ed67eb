"""The Claude Code CLI as `agent.driver=claude`: how it is started and how its stream reads.

It runs headless (`-p`, `--output-format stream-json`) in the workspace, reading the
prompt from stdin, with its config dir in the trial's HOME (no user settings, sessions
or credentials), no MCP server but an empty `--strict-mcp-config`, the workspace's file
and shell tools only (no web, no sub-agents), and its API calls sent to kgb's proxy with
the proxy's per-trial token as its key.

Its stream-json holds one JSON object a line: `system` (init), `assistant` (a message of
the model: one event per content block, each repeating the message's id and usage),
`user` (tool results), and a last `result` with the session's usage and whether it failed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kgb.agents.stream import Item, ToolEnded, ToolStarted, UsageReported
from kgb.usage import Usage

NAME = "claude"
TOOLS = ("Bash", "Read", "Write", "Edit", "Glob", "Grep")  # the built-in tools it has: no web, no sub-agents


def command(executable: str, model: str, system: str, tools: bool) -> list[str]:
    offered = ",".join(TOOLS) if tools else ""
    return [executable, "-p", "--output-format", "stream-json", "--verbose", "--model", model,
            "--tools", offered, "--allowedTools", offered, "--permission-mode", "acceptEdits",
            "--setting-sources", "", "--strict-mcp-config", "--mcp-config", '{"mcpServers": {}}',
            "--no-session-persistence", "--append-system-prompt", system]


def environment(home: Path, url: str, token: str, model: str) -> dict[str, str]:
    config = home / ".claude"
    config.mkdir(parents=True, exist_ok=True)
    return {
        "CLAUDE_CONFIG_DIR": str(config), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": token,
        # every model the CLI may pick for a side task is the trial's model
        "ANTHROPIC_MODEL": model, "ANTHROPIC_SMALL_FAST_MODEL": model, "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
        "ANTHROPIC_DEFAULT_SONNET_MODEL": model, "ANTHROPIC_DEFAULT_OPUS_MODEL": model,
        "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def usage_of(raw: dict[str, Any]) -> Usage:
    return Usage(int(raw.get("input_tokens") or 0), int(raw.get("output_tokens") or 0),
                 int(raw.get("cache_read_input_tokens") or 0), int(raw.get("cache_creation_input_tokens") or 0))


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict) and c.get("type") == "text")


def parse(event: dict[str, Any]) -> list[Item]:
    kind = event.get("type")
    items: list[Item] = []
    if kind == "assistant":
        message = event.get("message") or {}
        for block in message.get("content") or []:
            if block.get("type") == "tool_use":
                items.append(ToolStarted(block["id"], block["name"], block.get("input") or {}))
        if message.get("usage") and message.get("id"):
            items.append(UsageReported(message["id"], usage_of(message["usage"])))
    elif kind == "user":
        for block in (event.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                items.append(ToolEnded(block["tool_use_id"], _result_text(block.get("content")), bool(block.get("is_error"))))
    elif kind == "result":
        failed = event.get("is_error") or event.get("subtype") != "success"
        error = f"{event.get('subtype')}: {str(event.get('result') or '')[:500]}" if failed else None
        items.append(UsageReported("result", usage_of(event.get("usage") or {}), final=True, error=error,
                                   raw=json.loads(json.dumps(event))))
    return items
