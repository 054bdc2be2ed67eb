"""LLM providers behind one Model wrapper (model.py): retries, budgets, usage and cost.

`build(cfg)` runs before the sweep: it fails on a missing API key (naming the variable),
a missing SDK, an unknown provider, an endpoint it cannot reach, or a model the endpoint
does not serve, before any trial is run. An endpoint that does not list its models gets
one probe call of a few tokens instead, so that a misspelt name fails here rather than in
every trial (`model.validate=false` skips both).
Adding a provider is one module with a `complete(request, site) -> Reply` method and
one line in PROVIDERS.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable
from typing import Any

from kgb.models.content import Text, Tool, ToolResult, ToolUse
from kgb.models.failures import CallFailed, ModelCallFailed, ProviderUnavailable
from kgb.models.model import (
    CallSite,
    Completion,
    Defaults,
    Message,
    Model,
    Provider,
    Request,
    StopReason,
    TrialModel,
)

PROBE_TOKENS = 16  # the probe call's cap: a name check, not an answer
# Each endpoint and name is checked once per process (a single run checks it in the Hydra
# callback and again in the job).
_checked: set[tuple[str, str | None, str]] = set()


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
                         f"it must hold the {cfg.provider} API key (export {cfg.api_key_env}=...)")
    return key


def build(cfg: Any) -> Model | None:
    """The job's model, checked before any trial; None for `model=none`."""
    if cfg.provider == "none":
        return None
    # Hydra sets the root logger to INFO, at which the SDKs' HTTP client logs every request:
    # the ModelCalled events already hold each call, so its lines are noise.
    for client in ("httpx", "httpx2"):  # the SDKs' HTTP client, under either of its package names
        logging.getLogger(client).setLevel(logging.WARNING)
    if cfg.provider not in PROVIDERS:
        raise ValueError(f"unknown model provider {cfg.provider!r}; known: {', '.join(sorted(PROVIDERS))}")
    key = api_key(cfg) if cfg.provider != "replay" else ""
    try:
        provider = PROVIDERS[cfg.provider](cfg, key or "none")  # the SDKs want some string
    except ModuleNotFoundError as e:
        raise ValueError(f"model {cfg.name}: the {e.name} package (the {cfg.provider} SDK) is not installed: "
                         f"pip install -e . installs it, or pip install {e.name}") from None
    # replay sends the recorded model's settings, so that its requests match the log's
    defaults = getattr(provider, "defaults", None) or Defaults(cfg.name, cfg.temperature, cfg.max_tokens)
    model = Model(cfg, provider, defaults, secret=key)
    if cfg.validate:
        check_model(model, cfg)
    return model


def check_model(model: Model, cfg: Any) -> None:
    """Fail on an unreachable endpoint, a refused key, or a model the endpoint does not serve."""
    where = cfg.base_url or f"the {cfg.provider} API"
    checked = (cfg.provider, cfg.base_url, model.defaults.model)
    if checked in _checked:
        return
    try:
        known = model.provider.models()
    except CallFailed as e:
        raise ValueError(f"model {cfg.name}: listing the models of {where} failed: {model.redact(e.message)} "
                         f"(check model.base_url, and the key in {cfg.api_key_env or 'no variable'})") from None
    if known is None:
        probe(model, cfg, where)
    elif model.defaults.model not in known:
        raise ValueError(f"unknown model {model.defaults.model!r} at {where}; it serves: {', '.join(known[:30])}")
    _checked.add(checked)


def probe(model: Model, cfg: Any, where: str) -> None:
    """One call of at most PROBE_TOKENS tokens: the cheapest proof that the endpoint
    serves `model.name`. It is not part of any trial, so it is not logged as one."""
    request = Request(model.defaults.model, "", (Message("user", "Reply with the word OK."),), None, PROBE_TOKENS)
    try:
        model.provider.complete(request, CallSite(op="", sample=0, occurrence=0, index=0))
    except CallFailed as e:
        raise ValueError(f"model {cfg.name}: {where} does not list its models, and a probe call to "
                         f"{model.defaults.model!r} failed: {model.redact(e.message)}; check model.name, "
                         "or set model.validate=false if the name is right") from None
    print(f"note: {where} does not list its models; one probe call of at most {PROBE_TOKENS} tokens "
          f"found {model.defaults.model!r}", file=sys.stderr)


__all__ = [
    "PROVIDERS", "build", "api_key", "Model", "TrialModel", "Message", "Request", "Completion",
    "StopReason", "ModelCallFailed", "ProviderUnavailable", "Text", "Tool", "ToolUse", "ToolResult",
]
