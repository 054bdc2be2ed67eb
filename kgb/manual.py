"""`python run.py --help`: every config group and setting, each in a sentence.

Nothing here is written twice: a group option's sentence is the comment that opens its
conf/<group>/<option>.yaml, and a setting's sentence is the comment on its field in
kgb/config.py (the schema's documentation), so the help cannot drift from either.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any

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
# Settings sections: (prefix, schema, which methods or models have them)
SECTIONS: list[tuple[str, type, str]] = [
    ("method", schema.MethodConfig, "every method"),
    ("method", schema.LLMMethodConfig, "oneshot, passk, refine"),
    ("method", schema.PasskConfig, "passk"),
    ("method", schema.RefineConfig, "refine"),
    ("method", schema.TransferConfig, "transfer"),
    ("model", schema.LLMConfig, "every model but none"),
    ("model.price", schema.PriceConfig, "every model but none"),
    ("model", schema.ReplayConfig, "replay"),
    ("chip", schema.ChipConfig, "every chip"),
    ("eval", schema.EvalConfig, "every job"),
    ("tracking", schema.TrackingConfig, "every job"),
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
    for prefix, cls, who in SECTIONS:
        sentences = {**field_sentences(cls), **EXTRA.get(cls, {})}
        keys = {name: f"{prefix}.{name}" if prefix else name for name in sentences}
        shown_here = [name for name in sentences if keys[name] not in CHOSEN_BY_GROUP]
        if not shown_here:
            continue
        out.append(f"  for {who}:")
        for name in shown_here:
            key, sentence = keys[name], sentences[name]
            shown = f"{key} [{default(cls, name)}]" if name not in ("price", "from") else key
            out.append(f"    {shown:<34} {sentence}")
    return "\n".join(out)


def print_help() -> None:
    print(text())
