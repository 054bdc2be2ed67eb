"""A trial's identity (kgb/identity.py): what changes the prompt or the verdict changes the
key; what changes neither keeps it, so that finished trials are neither re-run nor mixed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kgb import chips
from kgb.config import ChipConfig, EvalConfig, LLMConfig, PasskConfig, PriceConfig, chip_config
from kgb.identity import Identity, Judging
from kgb.job import eval_settings, resolve_chip
from kgb.preflight import check_settings
from kgb.tracking.events import RunStarted
from kgb.tracking.log import read_events
from kgb.tracking.projections import trial_outcomes

OP, VERSION = "aten::softmax", 1


def ident(method=None, model=None, chip: str = "cpu", notes: str = "n", **eval_overrides) -> Identity:
    method = method or PasskConfig()
    model = model or LLMConfig(name="m", provider="openai")
    settings = eval_settings(EvalConfig(**eval_overrides), resolve_chip(ChipConfig(name=chip, backend="cpu", notes=notes)))
    return Identity(method.identity(), model.identity(), chip, notes, Judging.of(settings))


def key(identity: Identity, sample: int = 0) -> str:
    return identity.trial_key(OP, VERSION, sample)


@pytest.mark.parametrize("change", [
    dict(timeout_s=60.0), dict(cases="check"), dict(compile_for=90), dict(notes="other notes"),
    dict(method=PasskConfig(k=3)), dict(model=LLMConfig(name="m", provider="openai", max_tokens=99)),
])
def test_what_reaches_the_prompt_or_the_verdict_changes_the_key(change):
    assert key(ident(**change)) != key(ident())


@pytest.mark.parametrize("change", [
    dict(method=PasskConfig(samples=5)), dict(method=PasskConfig(concurrency=8)),
    dict(model=LLMConfig(name="m", provider="openai", retries=1, price=PriceConfig(input=9.0), max_job_cost_usd=3.0)),
    dict(repeats=7, warmup=1),  # nothing is timed on the CPU
])
def test_what_reaches_neither_keeps_the_key(change):
    assert key(ident(**change)) == key(ident())


def test_raising_samples_keeps_sample_zero_and_the_job():
    one, five = ident(method=PasskConfig(samples=1)), ident(method=PasskConfig(samples=5))
    assert key(one, 0) == key(five, 0) and key(five, 0) != key(five, 1)
    assert one.job_id("aten", [OP]) == five.job_id("aten", [OP])


def test_the_judges_version_is_part_of_the_key(monkeypatch):
    before = ident()
    monkeypatch.setattr("kgb.identity.JUDGE_VERSION", before.judging.judge_version + 1)
    assert key(ident()) != key(before)


def test_settings_say_how_verdicts_were_given():
    assert ident().settings == f"cpu cases=smoke timeout=300s judge=v{ident().judging.judge_version}"
    assert "compile_for=sm_90" in ident(compile_for=90).settings


def test_auto_resolves_to_the_chip_it_finds_notes_and_all(monkeypatch):
    """On a GPU host, chip=auto and chip=nvidia are one job with the same prompts."""
    monkeypatch.setattr(chips, "detect", lambda: "nvidia")
    monkeypatch.setattr(chips, "local_device", lambda: "cuda")
    monkeypatch.setattr(chips, "device_name", lambda: "NVIDIA H200")
    auto, nvidia = resolve_chip(ChipConfig(name="auto")), resolve_chip(chip_config("nvidia"))
    assert auto.notes == nvidia.notes != "" and (auto.name, auto.backend) == (nvidia.name, nvidia.backend)
    settings = eval_settings(EvalConfig(), auto)
    a, b = (Identity({"name": "expert"}, {"name": "none"}, c.name, c.notes, Judging.of(settings)) for c in (auto, nvidia))
    assert a == b and a.job_id("aten", [OP]) == b.job_id("aten", [OP])


def test_auto_on_this_cpu_is_chip_cpu():
    assert resolve_chip(ChipConfig(name="auto")).notes == resolve_chip(chip_config("cpu")).notes


@pytest.mark.parametrize(("setting", "value"), [
    ("timeout_s", -1.0), ("timeout_s", 0.0), ("cases", "most"), ("repeats", 0), ("compile_for", 9),
])
def test_bad_eval_settings_are_refused_before_any_trial(setting, value):
    from kgb.config import Config, ExpertConfig, ModelConfig, SourceConfig

    cfg = Config(method=ExpertConfig(), model=ModelConfig(), source=SourceConfig("aten"), chip=ChipConfig(),
                 eval=dataclasses.replace(EvalConfig(), **{setting: value}))
    with pytest.raises(ValueError, match=f"eval.{setting}="):
        check_settings(cfg)


# --- the log: RunStarted says the settings; schema 1 logs are upgraded on read -----------

GOLDEN = Path(__file__).parent / "golden"


def test_a_schema_1_log_reads_with_the_settings_rebuilt_from_its_config():
    [started] = [e for e in read_events(GOLDEN / "events-v1.jsonl") if isinstance(e, RunStarted)]
    assert started.schema_version == 2 and started.identity == {}
    assert started.settings == "cpu cases=smoke timeout=300s judge=unversioned"


def test_the_golden_schema_2_log_reads():
    events = read_events(GOLDEN / "events-v2.jsonl")
    [started] = [e for e in events if isinstance(e, RunStarted)]
    assert started.settings == "cpu cases=smoke timeout=300s judge=v2"
    assert started.identity["judging"]["timeout_s"] == 300.0 and started.identity["chip_notes"]
    assert [t.status.value for t in trial_outcomes(events).values()] == ["correct"]


def test_a_methods_parameters_are_named_where_they_are_not_its_defaults():
    """What the queries label a job's method with (kgb.method_params): nothing for the
    defaults of any method= option, the setting as the command line gives it otherwise."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from kgb.config import CONF_DIR, choices, register
    from kgb.method_params import method_params

    register()

    def params(*overrides: str) -> str:
        with initialize_config_dir(version_base="1.3", config_dir=str(CONF_DIR)):
            return method_params(OmegaConf.to_object(compose("config", overrides=list(overrides))).method.identity())

    for option in choices("method"):
        assert params(f"method={option}", "method.dir=/tmp/k", "method.samples=3") == ("dir=/tmp/k" if option == "files" else "")
    assert params("method=aiko", "method.agent.max_turns=4") == "agent.max_turns=4"
    assert params("method=refine", "method.until_correct=false", "method.rounds=2") == "rounds=2 until_correct=false"
    assert params("method=opencode", "method.mode=answer") == "mode=answer"


def test_a_cost_budget_on_a_model_without_prices_is_refused_before_any_trial():
    """A custom model (model=openai with another model.name) has no prices: each call costs $0
    to kgb, and model.max_job_cost_usd would never have stopped one (session 46's user walk)."""
    from kgb.config import LLMConfig, PriceConfig
    from kgb.preflight import check_model_settings

    with pytest.raises(ValueError, match=r"^model.max_job_cost_usd=5.0: every model.price.\* is 0 for my-model, so "):
        check_model_settings(LLMConfig(name="my-model", provider="openai", max_job_cost_usd=5.0))
    check_model_settings(LLMConfig(name="my-model", provider="openai", max_job_cost_usd=5.0, price=PriceConfig(output=2.0)))
    check_model_settings(LLMConfig(name="my-model", provider="openai"))  # no budget: nothing to keep
