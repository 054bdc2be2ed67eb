"""The command line's settings, checked before Hydra composes them (kgb.preflight's first
layer): every config group choice names a file under conf/ (Hydra's own message lists the
schemas' base_* too, on several lines), every setting a key of the config it sets (Hydra's
message for `methd=...` takes five), with a value its type takes (`eval.timeout_s=abc` is
seven lines of Hydra's) and a list where it takes one (`ops=aten::softmax` is Hydra's "str is
not a ListConfig"); `+` adds no key that has a value, and a multirun sweeps values it can
list. A failure is a `ConfigError`, which kgb.preflight.fail prints as one line.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

from hydra.core.config_store import ConfigStore
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, OverrideType
from hydra.errors import HydraException
from omegaconf import DictConfig, ListConfig, OmegaConf
from omegaconf.errors import ValidationError
from omegaconf.nodes import AnyNode, BooleanNode, FloatNode, IntegerNode, StringNode, ValueNode

from kgb.added_keys import schema_node
from kgb.config import CONF_DIR, GROUPS, Config, ConfigError, choices

# Hydra's own word for "trace this error", honoured here too.
FULL_ERROR = "HYDRA_FULL_ERROR"
# The settings of a command line checked before Hydra composes it: set, added, set or added.
CHECKED_KINDS = (OverrideType.CHANGE, OverrideType.ADD, OverrideType.FORCE_ADD)
# Value nodes' types in words (kgb.preflight.not_its_type): what a setting of each takes.
VALUE_KINDS = ((BooleanNode, "true or false"), (IntegerNode, "a whole number"), (FloatNode, "a number"),
               (StringNode, "text"))


def check_command_line(args: list[str]) -> None:
    """Every config group choice (`method=...`, also in a sweep `a,b`) names a conf/ file,
    then every setting (`eval.cases=...`) a key of the config it sets, with a value of its type."""
    overrides = [a for a in args if not a.startswith("-") and "=" in a]
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except Exception:  # noqa: BLE001 - a syntax error is Hydra's to report, with its position
        return
    chosen: dict[str, list[str]] = {}
    for override in parsed:
        group = override.key_or_group
        if group not in GROUPS or override.package or override.is_delete():
            continue
        values = list(override.sweep_string_iterator()) if override.is_sweep_override() else [override.value()]
        known = choices(group)
        for value in values:
            if str(value) not in known:
                raise ConfigError(f"unknown {group} {value!r}: choose one of {', '.join(known)} (conf/{group}/)")
        chosen[group] = [str(v) for v in values]
    # another config (--config-name ...) has other keys, and HYDRA_FULL_ERROR asks for Hydra's own trace
    if not os.environ.get(FULL_ERROR) and not any(a.startswith(("-cn", "-cp", "-cd", "--config")) for a in args):
        check_setting_names([o for o in parsed if any(is_setting(o, kind) for kind in CHECKED_KINDS)], chosen)


def is_setting(override: Override, kind: OverrideType = OverrideType.CHANGE) -> bool:
    """`key=value` or `key.sub=value` that Hydra sets in the composed config (or, by `kind`,
    `+key=value`, which adds one, or `++key=value`, either); not a group choice, not Hydra's
    own (`hydra.*`, `hydra/launcher=...`)."""
    key = override.key_or_group
    return (override.type == kind and not override.package and key not in GROUPS
            and "/" not in key and key.split(".")[0] != "hydra")


def check_setting_names(settings: list[Override], chosen: dict[str, list[str]]) -> None:
    """Each setting names a key of the composed config, under each option the command line
    chooses for its group (`method=oneshot,passk method.k=3` is refused for oneshot, as Hydra
    would refuse that job)."""
    configs: dict[str, DictConfig | None] = {}
    for override in settings:
        key = override.key_or_group
        head = key.split(".")[0]
        for value in chosen.get(head, [""]):
            choice = f"{head}={value}" if value else ""
            if choice not in configs:
                configs[choice] = composed([choice] if choice else [])
            if override.type == OverrideType.ADD:  # a key no schema has is kgb.added_keys' to refuse
                already_set(override, configs[choice])
                continue
            if override.type == OverrideType.CHANGE:  # `++` may add a key: kgb.added_keys' too
                unknown_setting(key, configs[choice])
            not_a_list(override, configs[choice])
            not_its_type(override, configs[choice])


def composed(overrides: list[str]) -> DictConfig | None:
    """The config run.py composes with these group choices, Hydra's node included (it records
    the choices); None where it cannot be composed here."""
    from hydra import compose, initialize_config_dir

    try:
        with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
            return compose(config_name="config", overrides=overrides, return_hydra_config=True)
    except Exception:  # noqa: BLE001 - e.g. Hydra already initialised in this process
        return None


def unknown_setting(key: str, config: DictConfig | None) -> None:
    """A ConfigError naming the nearest key where `key` is not one of `config`'s; without a
    config, in the schemas: `group.key` in all of the group's, any other in Config. Only nodes
    made from a schema are checked: their keys are all there are."""
    parts = key.split(".")
    group = parts[0] if parts[0] in GROUPS else None
    if config is not None:
        nodes, first = [config], 0
        choice = f"{group}={config.hydra.runtime.choices[group]}" if group else ""
    elif group:
        nodes, first, choice = [e.node for e in ConfigStore.instance().repo.get(group, {}).values()], 1, f"any {group}"
    else:
        nodes, first, choice = [OmegaConf.structured(Config)], 0, ""
    for depth in range(first, len(parts)):
        nodes = [n for n in nodes if schema_node(n)]
        if not nodes:
            return
        if not any(parts[depth] in n.keys() for n in nodes):
            here = "".join(f"{p}." for p in parts[:depth])
            names = sorted({str(k) for n in nodes for k in n.keys() if k not in ("_target_", "hydra")})
            known = [here + k for k in names]
            near = difflib.get_close_matches(parts[depth], names, n=1)
            where = f" for {choice}" if depth and choice else ""
            hint = f"did you mean {here}{near[0]}?" if near else f"the settings there are {', '.join(known)};"
            raise ConfigError(f"unknown setting {key}{where}; {hint} `python run.py --help` describes every setting")
        nodes = [n._get_node(parts[depth]) for n in nodes if parts[depth] in n.keys()]


def setting_node(key: str, config: DictConfig | None) -> Any:
    """The node `key` sets in `config`; without a config, a top-level key's in the schema;
    None where there is none."""
    node: Any = config if config is not None or "." in key else OmegaConf.structured(Config)
    for part in key.split("."):
        node = node._get_node(part) if isinstance(node, DictConfig) and part in node else None
    return node


def already_set(override: Override, config: DictConfig | None) -> None:
    """A ConfigError where `+key=value` adds a key that has a value: Hydra refuses it in four
    lines ("Could not append to config. An item is already at ..."). By Hydra's rule a key
    whose value is null is added to, and a dict or a list is merged into it."""
    if config is None or OmegaConf.select(config, override.key_or_group, throw_on_missing=False) is None:
        return
    if any(isinstance(value, dict | list) for value, _ in given(override)):
        return
    line = override.input_line or ""
    raise ConfigError(f"{line}: {override.key_or_group} is a setting already; set it without the + "
                      f"({line.lstrip('+')}), which adds a key kgb does not have")


def given(override: Override) -> list[tuple[Any, str]]:
    """The values a setting is given, each with its text: one, or each of a sweep's. A sweep
    that only a sweeper plugin enumerates (`interval(1,5)`) is refused: kgb's multirun, its
    checks included (SweepCheck), makes its jobs as Hydra's basic sweeper does, which takes
    none (its traceback, and this module's, until session 50)."""
    if not override.is_sweep_override():
        return [(override.value(), override.get_value_element_as_str())]
    try:
        return list(zip(override.sweep_iterator(), override.sweep_string_iterator(), strict=True))
    except HydraException:
        raise ConfigError(f"{override.input_line}: a multirun takes the values themselves, a,b,c or choice(a,b,c), or "
                          "range(start,stop,step), and makes a job of each") from None


def not_a_list(override: Override, config: DictConfig | None) -> None:
    """A ConfigError where a list setting is given something else: `ops=aten::softmax`, or
    `ops=aten::softmax,aten::add` (Hydra: "Ambiguous value" outside -m, a job per string in it)."""
    node = setting_node(override.key_or_group, config)
    values = [value for value, _ in given(override)]
    if not isinstance(node, ListConfig) or all(isinstance(v, list) or v is None and node._is_optional() for v in values):
        return
    key, items = override.key_or_group, [str(v) for v in values if v not in (None, "")]
    hint = f"{key}=[{','.join(items)}]"
    if len(items) > 1:
        hint += f" (one job over all), or -m '{key}={','.join(f'[{i}]' for i in items)}' (a job each)"
    raise ConfigError(f"{key} takes a list: {hint}")


def not_its_type(override: Override, config: DictConfig | None) -> None:
    """A ConfigError where a setting is given a value its type does not take: `eval.timeout_s=abc`,
    `method.samples=1.5`, `tracking.mlflow=maybe`, `eval.timeout_s=null`. Hydra's own message
    took five to seven lines ("Error merging override ... could not be converted to Float",
    full_key, reference_type, object_type, and where to find a stack trace; session 50's user
    walk). The node's own check is the one Hydra makes, so what passes here passes there."""
    node = setting_node(override.key_or_group, config)
    if not isinstance(node, ValueNode) or isinstance(node, AnyNode):
        return
    for value, text in given(override):
        if isinstance(value, str) and "${" in value:
            continue  # an interpolation: its value is known once the config is composed
        try:
            node.validate_and_convert(value)
        except ValidationError:
            key = override.key_or_group
            unset = "" if node._is_missing() else f" ({_shown(node._value())} unless set)"
            raise ConfigError(f"{key}={text}: {key} takes {expected_value(node)}{unset}; "
                              "`python run.py --help` describes every setting") from None


def expected_value(node: ValueNode) -> str:
    """What a value node takes, in words."""
    kinds = next((words for kind, words in VALUE_KINDS if isinstance(node, kind)), "a value")
    return f"{kinds}, or null" if node._is_optional() else kinds


def _shown(value: Any) -> str:
    """A value as the command line writes it."""
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def swept_settings(args: list[str]) -> list[str]:
    """`args` with each setting under a group that a multirun sweeps (`method=aiko,autokernel
    method.agent.max_turns=4`) forced (`++`): Hydra checks a sweep's plain settings against
    the group's default choice before it makes any job, and refused that one ("Key 'agent'
    not in 'ExpertConfig'") though every job of the sweep has the key. check_command_line has
    checked the key under each choice the sweep makes, so forcing adds nothing new."""
    if not {"-m", "--multirun"} & set(args):
        return args
    overrides = [a for a in args if not a.startswith("-") and "=" in a]
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except Exception:  # noqa: BLE001 - Hydra reports a syntax error
        return args
    swept = {o.key_or_group for o in parsed if o.key_or_group in GROUPS and o.is_sweep_override()}
    forced = {o.input_line for o in parsed if is_setting(o) and o.key_or_group.split(".")[0] in swept
              and "." in o.key_or_group}
    return [f"++{a}" if a in forced else a for a in args]
