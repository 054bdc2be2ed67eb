"""The OpenAI Chat Completions API, as served by OpenAI, vLLM and vendors (GLM, Qwen, ...).

OpenAI's `prompt_tokens` include cached tokens and its `completion_tokens` include
reasoning: cached tokens are moved out of the input bucket here, reasoning is counted
inside output only (docs/design/token-accounting.md).
"""

from __future__ import annotations

import json
from typing import Any

from kgb.config import LLMConfig
from kgb.models.content import ToolResult, ToolUse, arguments, blocks_text, tool_uses
from kgb.models.failures import malformed, sdk_failure
from kgb.models.model import CallSite, Message, Reply, Request, StopReason
from kgb.usage import Usage

STOP_REASONS = {
    "stop": StopReason.END, "length": StopReason.MAX_TOKENS, "content_filter": StopReason.REFUSAL,
    "tool_calls": StopReason.TOOL_USE,
}


def wire_messages(m: Message) -> list[dict[str, Any]]:
    """One message in Chat Completions form: tool calls ride on the assistant message,
    and each tool result is a message of its own (role `tool`) before any user text."""
    if isinstance(m.content, str):
        return [{"role": m.role, "content": m.content}]
    text = blocks_text(m.content)
    if m.role == "assistant":
        calls = [{"id": u.id, "type": "function", "function": {"name": u.name, "arguments": json.dumps(u.input)}}
                 for u in tool_uses(m.content)]
        return [{"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})}]
    results = [{"role": "tool", "tool_call_id": b.tool_use_id, "content": b.content}
               for b in m.content if isinstance(b, ToolResult)]
    return [*results, *([{"role": m.role, "content": text}] if text else [])]


def reply_tool_uses(message: dict[str, Any]) -> tuple[ToolUse, ...]:
    return tuple(ToolUse(c["id"], c["function"]["name"], arguments(c["function"].get("arguments")))
                 for c in message.get("tool_calls") or [])


def canonical_usage(raw: dict[str, Any]) -> Usage:
    """OpenAI's usage block in canonical buckets, without counting a token twice."""
    prompt = (raw.get("prompt_tokens_details") or {})
    # cached_tokens is OpenAI's field; DeepSeek-style endpoints send prompt_cache_hit_tokens
    cache_read = int(prompt.get("cached_tokens") or raw.get("prompt_cache_hit_tokens") or 0)
    cache_write = int(prompt.get("cache_write_tokens") or 0)
    reasoning = int((raw.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)
    return Usage(
        input_tokens=max(int(raw["prompt_tokens"]) - cache_read - cache_write, 0),
        output_tokens=int(raw["completion_tokens"]),  # reasoning included
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=reasoning,
    )


class OpenAIProvider:
    """Chat Completions calls through the openai SDK, one attempt each."""

    name = "openai"

    def __init__(self, cfg: LLMConfig, api_key: str):
        import openai

        self.sdk = openai
        # retries belong to the Model wrapper, so the SDK makes one attempt per call
        self.client = openai.OpenAI(api_key=api_key, base_url=cfg.base_url, max_retries=0, timeout=cfg.timeout_s)

    def complete(self, request: Request, site: CallSite, timeout_s: float | None = None) -> Reply:
        system = [{"role": "system", "content": request.system}] if request.system else []
        messages: list[Any] = [*system, *(w for m in request.messages for w in wire_messages(m))]
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
                 for t in request.tools]
        bound = {} if timeout_s is None else {"timeout": timeout_s}
        try:
            response = self.client.chat.completions.with_raw_response.create(
                model=request.model, max_tokens=request.max_tokens, messages=messages,
                temperature=self.sdk.omit if request.temperature is None else request.temperature,
                tools=tools or self.sdk.omit, **bound,
            )
        except self.sdk.APIError as e:
            raise sdk_failure(e, self.sdk) from e
        body = response.http_response.text
        try:
            data = json.loads(body)
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""  # reasoning_content (vLLM) is left out
            usage = canonical_usage(data["usage"])
            stop = STOP_REASONS.get(choice.get("finish_reason"), StopReason.OTHER)
            return Reply(text, stop, usage, data["usage"], reply_tool_uses(choice["message"]))
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
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
