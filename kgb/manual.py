"""`python run.py --help`: every config group and setting, each in a sentence.

Nothing here is written twice: a group option's sentence is the comment that opens its
conf/<group>/<option>.yaml, and a setting's sentence is the comment on its field in
kgb/config.py (the schema's documentation), so the help cannot drift from either. The
methods' settings are read from the method schemas in Hydra's ConfigStore, each shown for
the options built on the schema that declares it: a new method needs no edit here.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import sys
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from kgb import config as schema
from kgb.config import CONF_DIR, GROUPS, choices

USAGE = """\
kgb: how well do LLMs and coding agents write Triton GPU kernels?

usage: python run.py [-m] [GROUP=OPTION ...] [SETTING=VALUE ...]

  python run.py                         every operator's solution.py on this machine's chip
  python run.py -m method=oneshot,passk model=claude-opus-4-6 source=aten
                                        -m: one job per combination (Hydra multirun)
  HYDRA_FULL_ERROR=1 python run.py ...  a traceback instead of the one-line error
  python run.py --hydra-help            Hydra's own options
"""
GROUP_SENTENCES = {
    "method": "how candidates are produced",
    "model": "the LLM a method calls (none for expert and files)",
    "source": "which operators a job covers",
    "chip": "where kernels run; a chip this machine lacks makes its trials `skipped`",
}
# Settings sections after the methods' (method_sections): (prefix, schema, which models or jobs have them)
SECTIONS: list[tuple[str, type, str]] = [
    ("model", schema.LLMConfig, "every model but none"),
    ("model.price", schema.PriceConfig, "every model but none"),
    ("model", schema.ReplayConfig, "replay"),
    ("chip", schema.ChipConfig, "every chip"),
    ("eval", schema.EvalConfig, "every job"),
    ("tracking", schema.TrackingConfig, "every job"),
    ("progress", schema.ProgressConfig, "every job"),
    ("", schema.Config, "every job"),
]
FIELD = re.compile(r"^\s+(\w+): [^=#]+=.*?#\s*(.+)$")
# Chosen by the group (method=..., model=...), not set one by one.
CHOSEN_BY_GROUP = {"method", "model", "source", "chip", "method.name"}
# `from` is a Python keyword, declared without a commented line of its own (kgb/config.py).
EXTRA = {schema.ReplayConfig: {"from": "the tracking root (OUTPUTS_DIR) of the earlier run whose completions answer"},
         schema.TransferConfig: {"from": "the tracking root (OUTPUTS_DIR) of the runs whose kernels to judge here"}}


def wants_help(args: list[str]) -> bool:
    return "--help" in args or "-h" in args


def field_sentences(cls: type) -> dict[str, str]:
    """Field name -> the comment on its line, for the fields `cls` itself declares."""
    return {m.group(1): m.group(2) for line in inspect.getsource(cls).splitlines() if (m := FIELD.match(line))}


def method_sentences(cls: type) -> dict[str, str]:
    """field_sentences, and for a field `cls` declares again without a comment (a new
    default), the comment of the nearest base class that has one."""
    sentences = field_sentences(cls)
    for name in own_fields(cls):
        if name not in sentences:
            inherited = (s for base in cls.__mro__[1:] if dataclasses.is_dataclass(base)
                         if (s := field_sentences(base).get(name)))
            if sentence := next(inherited, None):
                sentences[name] = sentence
    return sentences


def own_fields(cls: type) -> list[str]:
    """The fields `cls` itself declares (ClassVars are not fields)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return [name for name in vars(cls).get("__annotations__", {}) if name in names]


def method_schemas() -> dict[type, list[str]]:
    """Each method schema in the ConfigStore -> the method= options built on it: the
    conf/method/*.yaml whose defaults name it (an alias through the option it names); a
    schema no option uses yet is shown under the name it gives its method."""
    schema.register()
    stored = {name.removesuffix(".yaml"): OmegaConf.get_type(entry.node)
              for name, entry in ConfigStore.instance().repo.get("method", {}).items()}
    users: dict[type, list[str]] = {cls: [] for cls in stored.values()
                                    if isinstance(cls, type) and issubclass(cls, schema.MethodConfig)}

    def built_on(option: str, seen: tuple[str, ...] = ()) -> type | None:
        for entry in OmegaConf.load(CONF_DIR / "method" / f"{option}.yaml").get("defaults") or []:
            if entry in stored:
                return stored[entry]
            if isinstance(entry, str) and entry in choices("method") and entry not in seen:
                return built_on(entry, (*seen, option))
        return None

    for option in choices("method"):
        if (cls := built_on(option)) in users:
            users[cls].append(option)
    return {cls: options or [str(default(cls, "name"))] for cls, options in users.items()}


def method_sections() -> list[tuple[str, type, str]]:
    """A section for each class of the method schemas' bases that declares settings: its own
    fields, for the options built on it; a field holding settings of its own (`agent`) is a
    section of its own (method.agent.*)."""
    users = method_schemas()
    every = sorted({option for options in users.values() for option in options})
    sections: list[tuple[str, type, str]] = []
    done: set[type] = set()
    for cls in users:
        for base in reversed(cls.__mro__):
            if base in done or not issubclass(base, schema.MethodConfig):
                continue
            done.add(base)
            who = sorted({option for c, options in users.items() if issubclass(c, base) for option in options})
            words = methods_in_words(who, every)
            sections.append(("method", base, words))
            own = own_fields(base)
            for f in dataclasses.fields(base):
                if f.name in own and dataclasses.is_dataclass(f.default_factory):
                    sections.append((f"method.{f.name}", f.default_factory, words))
    return sections


def methods_in_words(who: list[str], every: list[str]) -> str:
    """`passk`, `every method`, or `every method but expert, files` where that is shorter."""
    others = [option for option in every if option not in who]
    if not others:
        return "every method"
    return f"every method but {', '.join(others)}" if 2 * len(others) < len(who) else ", ".join(who)


def option_sentence(group: str, option: str) -> str:
    """The comment lines that open conf/<group>/<option>.yaml, as one sentence."""
    lines = []
    for line in (CONF_DIR / group / f"{option}.yaml").read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").strip())
    return " ".join(lines)


def default(cls: type, name: str) -> Any:
    f = next((f for f in dataclasses.fields(cls) if f.name == name), None)
    if f is None:
        return "(required)"
    if f.default is not dataclasses.MISSING and f.default != "???":
        return "null" if f.default is None else f.default
    return "(required)" if f.default == "???" else ""


def text() -> str:
    out = [USAGE, "Groups (GROUP=OPTION; conf/<group>/<option>.yaml):"]
    for group in GROUPS:
        out.append(f"  {group}: {GROUP_SENTENCES[group]}")
        out += [f"    {option:<16} {option_sentence(group, option)}" for option in choices(group)]
    out.append("\nSettings (SETTING=VALUE, default in brackets):")
    heading = ""
    for prefix, cls, who in [*method_sections(), *SECTIONS]:
        sentences = {**(method_sentences if prefix == "method" else field_sentences)(cls), **EXTRA.get(cls, {})}
        keys = {name: f"{prefix}.{name}" if prefix else name for name in sentences}
        shown_here = [name for name in sentences if keys[name] not in CHOSEN_BY_GROUP]
        if not shown_here:
            continue
        if who != heading:
            out.append(f"  for {who}:")
            heading = who
        for name in shown_here:
            key, sentence = keys[name], sentences[name]
            shown = f"{key} [{default(cls, name)}]" if name not in ("price", "from") else key
            out.append(f"    {shown:<34} {sentence}")
    return "\n".join(out)


def print_help() -> None:
    """The help on stdout; a reader that stops early (`--help | head`) ends it quietly, as it
    would a Unix tool: exit status 141, a SIGPIPE death's, and no traceback."""
    try:
        print(text(), flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so that exit's own flush cannot fail
        sys.exit(141)
