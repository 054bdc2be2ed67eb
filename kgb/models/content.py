"""Message content as blocks, and tools: what a tool-using conversation is made of.

A plain conversation has text messages. An agent's has blocks: the model's text, its
tool calls (`ToolUse`), and the harness's answers to them (`ToolResult`), sent back in the
next user message. `Tool` describes one tool in a request. These types are
provider-neutral; anthropic.py and openai.py each render them in their own wire format.
Each block carries its `type`, so a logged request (its JSON text) says what it held.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Text:
    """Text of a user or assistant message."""

    text: str
    type: str = "text"


@dataclass(frozen=True)
class ToolUse:
    """A tool call the model made: its id (the provider's), the tool and its arguments."""

    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    type: str = "tool_use"


@dataclass(frozen=True)
class ToolResult:
    """The harness's answer to one ToolUse, sent in the next user message."""

    tool_use_id: str
    content: str
    is_error: bool = False
    type: str = "tool_result"


Block = Text | ToolUse | ToolResult


@dataclass(frozen=True)
class Tool:
    """One tool offered to the model: name, what it does, and a JSON schema of its input."""

    name: str
    description: str
    parameters: dict[str, Any]


def blocks_text(content: str | tuple[Block, ...]) -> str:
    """The text parts of a message's content, joined."""
    if isinstance(content, str):
        return content
    return "".join(b.text for b in content if isinstance(b, Text))


def tool_uses(content: str | tuple[Block, ...]) -> tuple[ToolUse, ...]:
    return () if isinstance(content, str) else tuple(b for b in content if isinstance(b, ToolUse))


def tool_uses_json(uses: tuple[ToolUse, ...]) -> str:
    """The tool calls of a reply as logged (a blob beside the reply's text)."""
    return json.dumps([{"id": u.id, "name": u.name, "input": u.input} for u in uses], sort_keys=True)


def tool_uses_from_json(text: str) -> tuple[ToolUse, ...]:
    return tuple(ToolUse(u["id"], u["name"], u.get("input") or {}) for u in json.loads(text))


def arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """A tool call's arguments as a dict. OpenAI sends them as JSON text that a model may
    have written badly; that is kept as `_unparsed` so the tool can say what is wrong."""
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return {"_unparsed": raw}
    return value if isinstance(value, dict) else {"_unparsed": raw}
