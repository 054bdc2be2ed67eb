"""`python run.py --help` (kgb/manual.py) lists each method's settings from the method
schemas themselves: a method added as docs/adding-a-method.md says shows its own settings,
each with the comment on its field, with no edit of the manual."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest
from hydra.core.config_store import ConfigStore

from kgb import manual
from kgb.config import LLMMethodConfig, register


@dataclass
class BestOfNConfig(LLMMethodConfig):
    """n samples of the same prompt, all judged (the guide's example)."""

    _target_: str = "kgb.methods.best_of_n.BestOfN"
    name: str = "best_of_n"
    n: int = 4  # samples per operator
    temperature: float | None = 0.8


@pytest.fixture
def best_of_n():
    """The guide's method registered in this process's ConfigStore, and removed after."""
    register()
    ConfigStore.instance().store(group="method", name="base_best_of_n", node=BestOfNConfig)
    try:
        yield
    finally:
        del ConfigStore.instance().repo["method"]["base_best_of_n.yaml"]


def settings_of(help_text: str, heading: str) -> list[str]:
    """The setting lines under `  for <heading>:`."""
    lines = help_text.splitlines()
    start = lines.index(f"  for {heading}:") + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("    "))
    return [line.strip() for line in lines[start:end]]


def test_a_new_method_shows_its_own_settings_with_their_sentences(best_of_n):
    own = settings_of(manual.text(), "best_of_n")
    assert [line.split()[:2] for line in own] == [["method.n", "[4]"], ["method.temperature", "[0.8]"]]
    assert own[0].endswith("samples per operator")
    # declared again for a new default, without a comment: the base class's sentence
    assert own[1].endswith("overrides model.temperature for this method's calls")


def test_every_setting_of_every_method_schema_has_a_line_with_a_sentence():
    """A field of a method schema without a comment on its line would show no sentence: each
    field must have one (or inherit one)."""
    text = manual.text()
    shown = {line.split()[0]: line for line in text.splitlines() if line.startswith("    method.")}
    for cls in manual.method_schemas():
        for f in dataclasses.fields(cls):
            if f.name in ("_target_", "name"):
                continue
            if dataclasses.is_dataclass(f.default_factory):
                keys = [f"method.{f.name}.{g.name}" for g in dataclasses.fields(f.default_factory)]
            else:
                keys = [f"method.{f.name}"]
            for key in keys:
                assert key in shown, f"{cls.__name__}: {key} is not in --help"
                assert len(shown[key].split()) > 3, shown[key]
