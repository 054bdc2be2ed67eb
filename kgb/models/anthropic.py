"""Anthropic's Messages API, and endpoints that speak it (MiniMax's, for one).

Anthropic's `input_tokens` already exclude cache reads and writes, so its usage block
maps onto the canonical buckets one to one (docs/design/token-accounting.md).
"""

from __future__ import annotations

import json
from typing import Any

from kgb.config import LLMConfig
from kgb.models.content import Block, Text, ToolUse
from kgb.models.failures import malformed, sdk_failure
from kgb.models.model import CallSite, Message, Reply, Request, StopReason
from kgb.usage import Usage

STOP_REASONS = {
    "end_turn": StopReason.END, "stop_sequence": StopReason.END,
    "max_tokens": StopReason.MAX_TOKENS, "refusal": StopReason.REFUSAL, "tool_use": StopReason.TOOL_USE,
}


def wire_block(block: Block) -> dict[str, Any]:
    """One content block in the Messages API's form."""
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, ToolUse):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return {"type": "tool_result", "tool_use_id": block.tool_use_id, "content": block.content, "is_error": block.is_error}


def wire_message(m: Message) -> dict[str, Any]:
    content = m.content if isinstance(m.content, str) else [wire_block(b) for b in m.content]
    return {"role": m.role, "content": content}


def reply_blocks(content: list[dict[str, Any]]) -> tuple[str, tuple[ToolUse, ...]]:
    """The text and the tool calls of a reply's content; thinking blocks are left out."""
    text = "".join(b["text"] for b in content if b.get("type") == "text")
    uses = tuple(ToolUse(b["id"], b["name"], b.get("input") or {}) for b in content if b.get("type") == "tool_use")
    return text, uses


def canonical_usage(raw: dict[str, Any]) -> Usage:
    """Anthropic's usage block in canonical buckets: its figures do not overlap."""
    thinking = (raw.get("output_tokens_details") or {}).get("thinking_tokens")
    return Usage(
        input_tokens=int(raw["input_tokens"]),
        output_tokens=int(raw["output_tokens"]),
        cache_read_tokens=int(raw.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(raw.get("cache_creation_input_tokens") or 0),
        reasoning_tokens=int(thinking or 0),  # part of output_tokens already
    )


class AnthropicProvider:
    """Messages API calls through the anthropic SDK, one attempt each."""

    name = "anthropic"

    def __init__(self, cfg: LLMConfig, api_key: str):
        import anthropic

        self.sdk = anthropic
        # retries belong to the Model wrapper, so the SDK makes one attempt per call
        self.client = anthropic.Anthropic(api_key=api_key, base_url=cfg.base_url, max_retries=0, timeout=cfg.timeout_s)

    def complete(self, request: Request, site: CallSite, timeout_s: float | None = None) -> Reply:
        args: dict[str, Any] = {
            "model": request.model, "max_tokens": request.max_tokens,
            "messages": [wire_message(m) for m in request.messages],
        }
        if request.tools:
            args["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools]
        if request.system:
            args["system"] = request.system
        if request.temperature is not None:
            # SDK 2.x dropped the parameter (newer Claude models refuse it); the API still
            # takes it from the models that accept it, Opus 4.6 among them
            args["extra_body"] = {"temperature": request.temperature}
        if timeout_s is not None:
            args["timeout"] = timeout_s
        try:
            response = self.client.messages.with_raw_response.create(**args)
        except self.sdk.APIError as e:
            raise sdk_failure(e, self.sdk) from e
        body = response.http_response.text
        try:
            data = json.loads(body)
            text, uses = reply_blocks(data["content"])
            usage = canonical_usage(data["usage"])
            return Reply(text, STOP_REASONS.get(data.get("stop_reason"), StopReason.OTHER), usage, data["usage"], uses)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise malformed(body, f"{type(e).__name__}: {e}") from e

    def models(self) -> list[str] | None:
        try:
            return [m.id for m in self.client.models.list()]
        except (self.sdk.AuthenticationError, self.sdk.PermissionDeniedError) as e:
            raise sdk_failure(e, self.sdk) from e
        except self.sdk.APIStatusError:
            return None  # an endpoint that does not list its models
        except self.sdk.APIError as e:
            raise sdk_failure(e, self.sdk) from e

