"""The OpenCode CLI as `agent.driver=opencode`: how it is started and how its stream reads.

`opencode run --format json` runs in the workspace with a per-trial config
(`$XDG_CONFIG_HOME/opencode/opencode.json`, also named by OPENCODE_CONFIG): one provider,
`kgb`, an OpenAI-compatible endpoint at kgb's proxy with the proxy's per-trial token as
its key; the trial's model for every task; edits and shell allowed, the web and paths
outside the workspace denied; no sharing, no update, no external plugins; and kgb's system
text as its instructions.

Its stream holds one JSON object a line: `step_start`, `text`, `tool_use` (one per tool
call once it has run: input, output and status together), `step_finish` (a model call's
tokens) and `error`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from kgb.agents.nofollow import write_text
from kgb.agents.stream import Item, ToolEnded, ToolStarted, UsageReported
from kgb.usage import Usage

NAME = "opencode"
PROVIDER = "kgb"


def command(executable: str, model: str) -> list[str]:
    return [executable, "run", "--format", "json", "--model", f"{PROVIDER}/{model}"]


def write_config(home: Path, url: str, token: str, model: str, system: str) -> Path:
    directory = home / ".config" / "opencode"
    instructions = directory / "kgb-system.md"
    write_text(instructions, system, parents=True)
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {PROVIDER: {
            "npm": "@ai-sdk/openai-compatible", "name": "kgb proxy",
            "options": {"baseURL": f"{url}/v1", "apiKey": token},
            "models": {model: {"name": model, "tool_call": True}},
        }},
        "model": f"{PROVIDER}/{model}", "small_model": f"{PROVIDER}/{model}",
        "permission": {"edit": "allow", "bash": "allow", "webfetch": "deny", "external_directory": "deny"},
        "instructions": [str(instructions)],
        "share": "disabled", "autoupdate": False, "mcp": {},
    }
    path = directory / "opencode.json"
    write_text(path, json.dumps(config, indent=1))
    return path


def environment(home: Path, url: str, token: str, model: str, system: str) -> dict[str, str]:
    return {
        "OPENCODE_CONFIG": str(write_config(home, url, token, model, system)),
        "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_SHARE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    }


def usage_of(tokens: dict[str, Any]) -> Usage:
    cache = tokens.get("cache") or {}
    # OpenCode's input excludes cached tokens, and its output excludes reasoning
    reasoning = int(tokens.get("reasoning") or 0)
    return Usage(int(tokens.get("input") or 0), int(tokens.get("output") or 0) + reasoning,
                 int(cache.get("read") or 0), int(cache.get("write") or 0), reasoning)


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        data = error.get("data") or {}
        return f"{error.get('name', 'error')}: {data.get('message') or error.get('message') or json.dumps(error)}"[:500]
    return str(error)[:500]


def parse(event: dict[str, Any]) -> list[Item]:
    kind, part = event.get("type"), event.get("part") or {}
    if kind == "tool_use":
        state = part.get("state") or {}
        started = ToolStarted(part.get("callID") or part.get("id", ""), part.get("tool", ""), state.get("input") or {})
        if state.get("status") not in ("completed", "error"):
            return [started]
        output = state.get("output") if state.get("status") == "completed" else state.get("error")
        failed = state.get("status") == "error" or (state.get("metadata") or {}).get("exit") not in (None, 0)
        return [started, ToolEnded(started.id, str(output or ""), failed)]
    if kind == "step_finish":
        return [UsageReported(part.get("id") or part.get("messageID", ""), usage_of(part.get("tokens") or {}))]
    if kind == "error":
        return [UsageReported("error", Usage(), error=_error_text(event.get("error")), raw=event)]
    return []
