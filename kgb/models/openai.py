"""The OpenAI Chat Completions API, as served by OpenAI, vLLM and vendors (GLM, Qwen, ...).

OpenAI's `prompt_tokens` include cached tokens and its `completion_tokens` include
reasoning: cached tokens are moved out of the input bucket here, reasoning is counted
inside output only (docs/design/token-accounting.md).
"""

from __future__ import annotations

import json
from typing import Any

from kgb.config import LLMConfig
from kgb.models.model import CallSite, Reply, Request, StopReason, malformed, sdk_failure
from kgb.usage import Usage

STOP_REASONS = {"stop": StopReason.END, "length": StopReason.MAX_TOKENS, "content_filter": StopReason.REFUSAL}


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

    def complete(self, request: Request, site: CallSite) -> Reply:
        system = [{"role": "system", "content": request.system}] if request.system else []
        messages: list[Any] = [*system, *({"role": m.role, "content": m.content} for m in request.messages)]
        try:
            response = self.client.chat.completions.with_raw_response.create(
                model=request.model, max_tokens=request.max_tokens, messages=messages,
                temperature=self.sdk.omit if request.temperature is None else request.temperature,
            )
        except self.sdk.APIError as e:
            raise sdk_failure(e, self.sdk) from e
        body = response.http_response.text
        try:
            data = json.loads(body)
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""  # reasoning_content (vLLM) is left out
            usage = canonical_usage(data["usage"])
            return Reply(text, STOP_REASONS.get(choice.get("finish_reason"), StopReason.OTHER), usage, data["usage"])
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
