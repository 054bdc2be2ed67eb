"""A job's method configuration in a few words: the parameters its identity records of the
method (RunStarted.identity["method"], kgb.identity) that differ from the method's defaults.

Two `method=files` jobs over two users' folders, or `method=aiko` with
`method.agent.max_turns=4` and `=20`, are other methods as far as results go: the queries
keep them in rows of their own, labelled `files dir=/tmp/k` and `aiko agent.max_turns=4`
(`TrialRow.method_label`). Only what differs is named, so the defaults read just `aiko`.

A method's defaults are what `method=<name>` gives: conf/method/<name>.yaml over the schema
its `defaults` list names (kgb.config, kgb.agents.config), composed here with OmegaConf
alone, as Hydra would, since the MLflow projection runs inside Hydra's own app.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import DictConfig, OmegaConf

from kgb.config import CONF_DIR, choices, register


def method_params(method: dict[str, Any]) -> str:
    """`agent.max_turns=4 iterations=5`: each parameter of a method identity that its
    method's defaults do not have, in the identity's order; "" for the defaults, and for an
    empty identity (a log of schema 1, RunStarted.identity {})."""
    if not method:
        return ""
    name = str(method.get("name", ""))
    default = _flat(defaults(name) or {})
    return " ".join(f"{key}={_word(value)}" for key, value in _flat(method).items()
                    if key != "name" and (key not in default or default[key] != value))


@functools.cache
def defaults(name: str) -> dict[str, Any] | None:
    """The identity of `method=<name>` as conf/method/ composes it (None: no option there
    makes a method of that name, e.g. one of a later kgb's). The option of that name is
    tried first: `ako4all` also composes to `aiko`."""
    register()
    options = choices("method")
    for option in sorted(options, key=lambda o: o != name):
        cfg = _composed(option, options)
        if cfg is not None and cfg.get("name") == name:
            return _identity(cfg)
    return None


def _composed(option: str, options: list[str], seen: tuple[str, ...] = ()) -> DictConfig | None:
    """conf/method/<option>.yaml merged over what its `defaults` list names (a schema stored
    as base_*, or another option), `_self_` where it stands, last where it is not named."""
    raw = OmegaConf.load(CONF_DIR / "method" / f"{option}.yaml")
    assert isinstance(raw, DictConfig)
    entries = list(raw.pop("defaults", None) or [])
    if "_self_" not in entries:
        entries.append("_self_")
    stored = ConfigStore.instance().repo.get("method", {})
    cfg: DictConfig | None = None
    for entry in entries:
        if entry == "_self_":
            part = raw
        elif f"{entry}.yaml" in stored:
            part = stored[f"{entry}.yaml"].node
        elif entry in options and entry not in seen:
            part = _composed(entry, options, (*seen, option))
        else:
            return None  # not a method option as kgb lays them out
        if part is not None:
            # the first part keeps its schema's type, so the merge checks keys as Hydra does
            cfg = part.copy() if cfg is None else OmegaConf.merge(cfg, part)  # type: ignore[assignment]
    return cfg


def _identity(cfg: DictConfig) -> dict[str, Any]:
    """What `Keyed.identity()` keeps of a composed method config: its fields less
    `not_identity` and `_target_`; a value still missing (files' `dir: ???`) as "???"."""
    schema = OmegaConf.get_type(cfg)
    left_out = set(getattr(schema, "not_identity", ())) | {"_target_"}
    values = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=False)
    assert isinstance(values, dict)
    return {str(k): v for k, v in values.items() if k not in left_out}


def _flat(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested settings as the command line names them: {"agent.max_turns": 4}."""
    flat: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _word(value: Any) -> str:
    """A value as it would be written on the command line: true, null, 0.8, /tmp/k."""
    if isinstance(value, str):
        return value
    return json.dumps(value)
