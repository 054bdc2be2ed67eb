"""LLM providers behind one Model wrapper (model.py): retries, budgets, usage and cost.

`build(cfg)` runs before the sweep: it fails on a missing API key (naming the variable),
an unknown provider, or a model the endpoint does not serve, before any trial is run.
Adding a provider is one module with a `complete(request, site) -> Reply` method and
one line in PROVIDERS.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from kgb.models.content import Text, Tool, ToolResult, ToolUse
from kgb.models.model import (
    CallFailed,
    Completion,
    Defaults,
    Message,
    Model,
    ModelCallFailed,
    Provider,
    Request,
    StopReason,
    TrialModel,
)


def _anthropic(cfg: Any, key: str) -> Provider:
    from kgb.models.anthropic import AnthropicProvider

    return AnthropicProvider(cfg, key)


def _openai(cfg: Any, key: str) -> Provider:
    from kgb.models.openai import OpenAIProvider

    return OpenAIProvider(cfg, key)


def _replay(cfg: Any, key: str) -> Provider:
    from kgb.models.replay import ReplayProvider

    return ReplayProvider(cfg)


# name -> factory(config, api key). Factories import lazily so that an SDK is needed only
# when its provider is used.
PROVIDERS: dict[str, Callable[[Any, str], Provider]] = {
    "anthropic": _anthropic,
    "openai": _openai,
    "replay": _replay,
}


def api_key(cfg: Any) -> str:
    """The key from the environment variable the config names (the config never holds it);
    "" for an endpoint without authentication (`model.api_key_env=""`, a local vLLM)."""
    if not cfg.api_key_env:
        return ""
    key = os.environ.get(cfg.api_key_env, "")
    if not key:
        raise ValueError(f"model {cfg.name}: the environment variable {cfg.api_key_env} is not set; "
                         f"it must hold the {cfg.provider} API key")
    return key


def build(cfg: Any) -> Model | None:
    """The job's model, checked before any trial; None for `model=none`."""
    if cfg.provider == "none":
        return None
    if cfg.provider not in PROVIDERS:
        raise ValueError(f"unknown model provider {cfg.provider!r}; known: {', '.join(sorted(PROVIDERS))}")
    key = api_key(cfg) if cfg.provider != "replay" else ""
    provider = PROVIDERS[cfg.provider](cfg, key or "none")  # the SDKs want some string
    # replay sends the recorded model's settings, so that its requests match the log's
    defaults = getattr(provider, "defaults", None) or Defaults(cfg.name, cfg.temperature, cfg.max_tokens)
    model = Model(cfg, provider, defaults, secret=key)
    if cfg.validate:
        check_model(model, cfg)
    return model


def check_model(model: Model, cfg: Any) -> None:
    """Fail on a refused key or a model the endpoint does not list."""
    where = cfg.base_url or f"the {cfg.provider} API"
    try:
        known = model.provider.models()
    except CallFailed as e:
        raise ValueError(f"model {cfg.name}: listing the models of {where} failed: {model.redact(e.message)} "
                         f"(the key comes from {cfg.api_key_env or 'no variable'})") from None
    if known is None:
        print(f"note: {where} does not list its models; model.name={cfg.name} is not checked", file=sys.stderr)
        return
    if model.defaults.model not in known:
        raise ValueError(f"unknown model {model.defaults.model!r} at {where}; it serves: {', '.join(known[:30])}")


__all__ = [
    "PROVIDERS", "build", "api_key", "Model", "TrialModel", "Message", "Request", "Completion",
    "StopReason", "ModelCallFailed", "Text", "Tool", "ToolUse", "ToolResult",
]
