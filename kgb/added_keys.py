"""Settings added with Hydra's `+` (or `++`) that nothing reads.

The job reads its config as the schemas' objects (kgb.config), so a key no schema has is
silently left out: `+foo=1`, or a misspelt `+method.agent.max_turn=4`, changed nothing and
said nothing (session 45's user walk). kgb.preflight refuses such a key in one line, unless
another value interpolates it (`+tag=x tracking.experiment=${tag}` is read).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from typing import Any

from omegaconf import DictConfig, OmegaConf

from kgb.config import ConfigError


def schema_node(node: Any) -> bool:
    """A config node with a value, made from a dataclass schema (its keys are all it may have)."""
    return (isinstance(node, DictConfig) and not node._is_missing() and not node._is_none()
            and dataclasses.is_dataclass(OmegaConf.get_type(node)))


def unread_keys(config: DictConfig, context: DictConfig | None = None) -> None:
    """A ConfigError for a key that `+key=value` (or `++`) added and nothing reads: one that
    no schema has (the job reads its config as the schemas' objects, so `+foo=1` and a
    misspelt `+method.agent.max_turn=4` were silently left out) and that no other value
    interpolates (`+tag=x tracking.experiment=${tag}` is read). `context`: a config whose
    interpolations also count (a multirun's, with Hydra's own node)."""
    read = _interpolated(config) | (_interpolated(context) if context is not None else set())
    for key, near in _extra_keys(config):
        if any(r == key or r.startswith(f"{key}.") or key.startswith(f"{r}.") for r in read):
            continue
        hint = f"did you mean {near}?" if near else "leave it out;"
        raise ConfigError(f"unknown setting {key} (added with +): kgb has no such setting and no other setting reads it "
                          f"as ${{{key}}}; {hint} `python run.py --help` describes every setting")


def _extra_keys(node: DictConfig, path: str = "") -> list[tuple[str, str | None]]:
    """The keys of `node` and its schema-made children that their schemas lack, each with the
    nearest key the schema has (or None). Hydra's own node is not the job's."""
    fields = [f.name for f in dataclasses.fields(OmegaConf.get_type(node))]  # type: ignore[arg-type]
    found: list[tuple[str, str | None]] = []
    for key in node.keys():
        key = str(key)
        if key == "hydra" and not path:
            continue
        if key not in fields:
            near = difflib.get_close_matches(key, fields, n=1)
            found.append((path + key, path + near[0] if near else None))
        elif schema_node(child := node._get_node(key)):
            found += _extra_keys(child, f"{path}{key}.")  # type: ignore[arg-type]
    return found


def _interpolated(config: DictConfig) -> set[str]:
    """The keys that a value of `config` interpolates: `x` and `a.b` of `${x}/${a.b}`."""
    text = str(OmegaConf.to_container(config, resolve=False, throw_on_missing=False))
    return set(re.findall(r"\$\{\s*([A-Za-z_][\w.-]*)\s*\}", text))


