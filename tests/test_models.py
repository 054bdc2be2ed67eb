"""The Model wrapper and its providers, driven through the real anthropic and openai SDK
clients against tests/fake_llm_server.py on 127.0.0.1: usage and cost, retries,
failures, budgets, resume, validation before the sweep, presets and replay."""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path

import pytest
from fake_llm_server import Answer, Fail, FakeLLMServer, Hang, Malformed, Queue
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from kgb import models, operators
from kgb.config import (
    ChipConfig,
    Config,
    EvalConfig,
    LLMConfig,
    ModelConfig,
    OneshotConfig,
    PriceConfig,
    ReplayConfig,
    SourceConfig,
    TrackingConfig,
    register,
)
from kgb.evaluate import EvalSettings
from kgb.models import Message, ModelCallFailed, ProviderUnavailable
from kgb.models.anthropic import canonical_usage as anthropic_usage
from kgb.models.openai import canonical_usage as openai_usage
from kgb.operators import REPO_ROOT
from kgb.run import build_model, run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import ModelCalled
from kgb.tracking.log import EventLog, read_events
from kgb.trial import BudgetExhausted, TrialContext
from kgb.usage import Usage

SECRET = "sk-test-9f8e7d6c5b4a-do-not-log"
PROVIDERS = ["anthropic", "openai"]
PRICE = PriceConfig(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("KGB_TEST_KEY", SECRET)


def llm(provider: str, server: FakeLLMServer, **overrides) -> LLMConfig:
    url = server.url if provider == "anthropic" else server.openai_url
    settings = dict(name="fake-model", provider=provider, base_url=url, api_key_env="KGB_TEST_KEY",
                    retries=3, backoff_s=0.01, timeout_s=1.0, price=PRICE)
    return LLMConfig(**{**settings, **overrides})


def trial_ctx(root: Path, prior=(), key: str = "t1") -> TrialContext:
    spec = operators.load("aten::softmax")
    return TrialContext(
        problem=spec.problem(), spec=spec, settings=EvalSettings(), log=EventLog(root / "jobs/j/events.jsonl"),
        blobs=BlobStore(root / "blobs"), job="j", key=key, sample=0, prior=list(prior),
    )


def called(ctx: TrialContext) -> list[ModelCalled]:
    return [e for e in read_events(ctx.log.path) if isinstance(e, ModelCalled)]


def no_secret_under(root: Path) -> bool:
    return not any(SECRET in p.read_text(errors="replace") for p in root.rglob("*") if p.is_file())


def ask(ctx: TrialContext, text: str = "write a kernel", **kw):
    return ctx.model.complete([Message("user", text)], system="be brief", **kw)


# --- canonical usage ---------------------------------------------------------------

def test_anthropic_usage_maps_one_to_one():
    raw = {"input_tokens": 10, "cache_read_input_tokens": 700, "cache_creation_input_tokens": 40,
           "output_tokens": 90, "output_tokens_details": {"thinking_tokens": 60}}
    assert anthropic_usage(raw) == Usage(10, 90, 700, 40, 60)
    assert anthropic_usage({"input_tokens": 5, "output_tokens": 1}) == Usage(5, 1)


def test_openai_usage_moves_cached_tokens_out_of_the_input():
    raw = {"prompt_tokens": 750, "completion_tokens": 90, "total_tokens": 840,
           "prompt_tokens_details": {"cached_tokens": 700}, "completion_tokens_details": {"reasoning_tokens": 60}}
    usage = openai_usage(raw)
    assert usage == Usage(50, 90, 700, 0, 60)
    assert usage.total_tokens == raw["total_tokens"]  # nothing counted twice
    deepseek = {"prompt_tokens": 750, "completion_tokens": 9, "prompt_cache_hit_tokens": 700}
    assert openai_usage(deepseek) == Usage(50, 9, 700, 0, 0)


# --- calls through the SDKs ---------------------------------------------------------

@pytest.mark.parametrize("provider", PROVIDERS)
def test_usage_and_cost_are_what_the_server_reported(provider, tmp_path, key):
    answer = Answer("```python\npass\n```", input=1200, output=800, cache_read=3000, cache_write=500, reasoning=300)
    with FakeLLMServer(Queue([answer]), api_key=SECRET) as server:
        ctx = trial_ctx(tmp_path)
        ctx.model = models.build(llm(provider, server)).for_trial(ctx)
        completion = ask(ctx)
    [event] = called(ctx)
    cost = (1200 * 3.0 + 800 * 15.0 + 3000 * 0.3 + 500 * 3.75) / 1e6
    assert event.usage == Usage(1200, 800, 3000, 500, 300, cost)
    assert event.usage.total_tokens == 5500
    if provider == "openai":
        assert event.raw_usage["prompt_tokens"] == 4700 and event.raw_usage["total_tokens"] == 5500
    else:
        assert event.raw_usage["input_tokens"] == 1200
    assert (event.provider, event.model, event.retries, event.error, event.stop_reason) == (provider, "fake-model", 0, None, "end")
    assert completion.text == answer.text and completion.request_hash == event.request_hash
    request = json.loads(ctx.blobs.get(event.request_blob))
    assert request["messages"] == [{"role": "user", "content": "write a kernel"}] and request["system"] == "be brief"
    assert server.calls[0].body["max_tokens"] == 16384 and server.calls[0].body["temperature"] == 0.0
    assert no_secret_under(tmp_path)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_temperature_is_the_methods_unless_the_model_refuses_one(provider, tmp_path, key):
    with FakeLLMServer(Queue([Answer("a")])) as server:
        ctx = trial_ctx(tmp_path)
        ctx.model = models.build(llm(provider, server)).for_trial(ctx)
        ask(ctx, temperature=0.8)
        ctx.model = models.build(llm(provider, server, accepts_temperature=False)).for_trial(ctx)
        ask(ctx, temperature=0.8)
    assert server.calls[0].body["temperature"] == 0.8 and "temperature" not in server.calls[1].body
    assert [json.loads(ctx.blobs.get(e.request_blob))["temperature"] for e in called(ctx)] == [0.8, None]


TRANSIENT = {
    "429-retry-after": Fail(429, retry_after="1"),
    "500": Fail(500),
    "529-overloaded": Fail(529),
    "hung-connection": Hang(),
    "invalid-json": Malformed("this is not json {"),
    "json-without-fields": Malformed('{"id": "x"}'),
}


@pytest.mark.parametrize("failure", TRANSIENT.values(), ids=TRANSIENT.keys())
@pytest.mark.parametrize("provider", PROVIDERS)
def test_transient_failures_are_retried_and_logged(provider, failure, tmp_path, key, capsys):
    with FakeLLMServer(Queue([failure, Answer("fine")])) as server:
        ctx = trial_ctx(tmp_path)
        ctx.model = models.build(llm(provider, server, timeout_s=0.5)).for_trial(ctx)
        started = time.perf_counter()
        assert ask(ctx).text == "fine"
        elapsed = time.perf_counter() - started
    [event] = called(ctx)
    assert (event.retries, event.error, len(server.calls)) == (1, None, 2)
    assert event.usage.input_tokens == 100
    if isinstance(failure, Fail) and failure.retry_after:
        assert elapsed >= 1.0  # the server's retry-after, not the 0.01 s backoff
    assert "retry 1/3" in capsys.readouterr().err


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_call_that_keeps_failing_is_logged_and_raises(provider, tmp_path, key):
    with FakeLLMServer(Queue([Fail(500)])) as server:
        ctx = trial_ctx(tmp_path)
        ctx.model = models.build(llm(provider, server, retries=2)).for_trial(ctx)
        with pytest.raises(ProviderUnavailable, match="after 2 retries: HTTP 500"):  # an outage, not the method's
            ask(ctx)
    [event] = called(ctx)
    assert (event.retries, event.response_blob, event.usage, len(server.calls)) == (2, None, Usage(), 3)
    assert event.error.startswith("HTTP 500")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_client_errors_are_not_retried_and_keys_are_redacted(provider, tmp_path, key, monkeypatch):
    with FakeLLMServer(Queue([Answer("x")]), api_key="the-right-key") as server:
        cfg = llm(provider, server, validate=False)
        ctx = trial_ctx(tmp_path)
        ctx.model = models.build(cfg).for_trial(ctx)
        with pytest.raises(ProviderUnavailable, match="HTTP 401") as raised:  # access lost: retried by a re-run
            ask(ctx)
        assert len(server.calls) == 0  # refused before the responder: one attempt, no retry
    [event] = called(ctx)
    assert event.retries == 0 and "[redacted]" in event.error
    assert SECRET not in str(raised.value) and no_secret_under(tmp_path)


def test_trial_token_budget_ends_the_trial(tmp_path, key):
    with FakeLLMServer(Queue([Answer("a", input=900, output=200)])) as server:
        ctx = trial_ctx(tmp_path)
        ctx.model = models.build(llm("anthropic", server, max_trial_tokens=1000)).for_trial(ctx)
        ask(ctx)  # 1100 tokens: the call that crosses the budget is still answered
        with pytest.raises(BudgetExhausted, match="trial token budget reached: 1100 of 1000"):
            ask(ctx, "again")
        assert len(server.calls) == 1


def test_job_cost_budget_counts_earlier_runs_of_the_job(tmp_path, key):
    earlier = trial_ctx(tmp_path, key="t0")
    earlier.emit(ModelCalled(job="j", provider="anthropic", model="fake-model", request_hash="h", request_blob="b",
                             response_blob=None, usage=Usage(cost_usd=0.75)))
    with FakeLLMServer(Queue([Answer("a")])) as server:
        ctx = trial_ctx(tmp_path)
        ctx.model = models.build(llm("anthropic", server, max_job_cost_usd=0.5)).for_trial(ctx)
        with pytest.raises(BudgetExhausted, match=r"job cost budget reached: \$0.7500"):
            ask(ctx)
        assert server.calls == []


def test_a_resumed_trial_gets_logged_answers_without_calling_again(tmp_path, key):
    """The same request sent three times (as passk does): the first attempt was answered
    twice before it was cut short; the resumed attempt pays only for the third."""
    with FakeLLMServer(Queue([Answer("first"), Answer("second")])) as server:
        first = trial_ctx(tmp_path)
        first.model = models.build(llm("openai", server)).for_trial(first)
        assert [ask(first).text, ask(first).text] == ["first", "second"]
    prior = read_events(first.log.path)
    first.log.close()
    with FakeLLMServer(Queue([Answer("third")])) as server:
        resumed = trial_ctx(tmp_path, prior=prior)
        resumed.model = models.build(llm("openai", server)).for_trial(resumed)
        assert [ask(resumed).text for _ in range(3)] == ["first", "second", "third"]
        assert len(server.calls) == 1 and server.calls[0].occurrence == 0
    assert len(called(resumed)) == 3  # two from the first attempt, one new


# --- before the sweep ----------------------------------------------------------------

def test_missing_key_fails_naming_the_variable(monkeypatch):
    monkeypatch.delenv("KGB_TEST_KEY", raising=False)
    cfg = LLMConfig(name="fake-model", provider="anthropic", api_key_env="KGB_TEST_KEY")
    with pytest.raises(ValueError, match="KGB_TEST_KEY is not set"):
        models.build(cfg)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_unknown_model_and_refused_key_fail_before_any_call(provider, key):
    with FakeLLMServer(Queue([Answer("x")]), models=("real-model",)) as server:
        with pytest.raises(ValueError, match="unknown model 'fake-model'.*real-model"):
            models.build(llm(provider, server))
    with FakeLLMServer(Queue([Answer("x")]), api_key="another") as server:
        with pytest.raises(ValueError, match="HTTP 401.*KGB_TEST_KEY") as raised:
            models.build(llm(provider, server))
        assert SECRET not in str(raised.value) and server.calls == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_endpoint_that_does_not_list_its_models_gets_one_probe_call(provider, key, capsys):
    with FakeLLMServer(Queue([Answer("OK", input=9, output=1)]), lists_models=False) as server:
        models.build(llm(provider, server))
        [probe] = server.calls
        assert probe.body["model"] == "fake-model" and probe.body["max_tokens"] == models.PROBE_TOKENS
    assert "one probe call" in capsys.readouterr().err
    with FakeLLMServer(Queue([Fail(404, message="model not found")]), lists_models=False) as server:
        with pytest.raises(ValueError, match="does not list its models.*HTTP 404.*model.validate=false"):
            models.build(llm(provider, server, name="fake-modle"))
        assert len(server.calls) == 1  # a 404 is not retried


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_missing_sdk_fails_with_the_install_command(provider, key, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, provider, None)  # import raises ModuleNotFoundError
    with FakeLLMServer(Queue([Answer("x")])) as server:
        with pytest.raises(ValueError, match=f"the {provider} package .* is not installed: pip install"):
            models.build(llm(provider, server))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_refused_request_is_the_methods_failure_not_an_outage(provider, tmp_path, key):
    with FakeLLMServer(Queue([Fail(400, message="prompt is too long")])) as server:
        ctx = trial_ctx(tmp_path)
        ctx.model = models.build(llm(provider, server)).for_trial(ctx)
        with pytest.raises(ModelCallFailed, match="HTTP 400") as raised:
            ask(ctx)
        assert not isinstance(raised.value, ProviderUnavailable) and len(server.calls) == 1


def test_unknown_provider_and_a_method_without_model_fail():
    with pytest.raises(ValueError, match="unknown model provider 'nope'"):
        models.build(LLMConfig(name="x", provider="nope"))
    cfg = Config(method=OneshotConfig(), model=ModelConfig(), source=SourceConfig("aten"),
                 chip=ChipConfig())
    with pytest.raises(ValueError, match="method oneshot calls a model"):
        build_model(cfg)


PRESETS = {
    "claude-opus-4-6": ("anthropic", "ANTHROPIC_API_KEY"), "glm-5": ("openai", "ZAI_API_KEY"),
    "qwen3.5-27b": ("openai", "VLLM_API_KEY"), "minimax-m2.5": ("anthropic", "MINIMAX_API_KEY"),
    "anthropic": ("anthropic", "ANTHROPIC_API_KEY"), "openai": ("openai", "OPENAI_API_KEY"),
}


def compose_job(*overrides: str) -> Config:
    register()
    with initialize_config_dir(config_dir=str(REPO_ROOT / "conf"), version_base="1.3"):
        return OmegaConf.to_object(compose("config", overrides=list(overrides)))


@pytest.mark.parametrize("preset", PRESETS)
def test_model_presets_compose(preset):
    cfg = compose_job("method=oneshot", f"model={preset}", "model.name=some-model")
    assert isinstance(cfg.model, LLMConfig)
    assert (cfg.model.provider, cfg.model.api_key_env) == PRESETS[preset]
    assert "price" not in cfg.model.identity()  # a price change makes no new trials


def test_replay_composes_with_model_from(tmp_path):
    cfg = compose_job("method=refine", "model=replay", f"model.from={tmp_path}", "model.match=position")
    assert isinstance(cfg.model, ReplayConfig) and getattr(cfg.model, "from") == str(tmp_path)
    with pytest.raises(ValueError, match="no event logs"):
        build_model(cfg)


# --- replay --------------------------------------------------------------------------

def test_replay_answers_from_an_earlier_run_for_free(tmp_path, key):
    prose = {"aten::add": Answer("I cannot.", input=11, output=3), "aten::softmax": Answer("Nor I.", input=22, output=4)}

    def by_op(call):
        return next(a for op, a in prose.items() if f"`{op}`" in call.prompt)

    def job(model, root: Path) -> Config:
        return Config(method=OneshotConfig(), model=model, source=SourceConfig("aten"),
                      chip=ChipConfig(name="cpu", backend="cpu"), eval=EvalConfig(cases="smoke"),
                      tracking=TrackingConfig(root=str(root), mlflow=False), ops=["aten::add", "aten::softmax"])

    with FakeLLMServer(by_op) as server:
        run_job(job(llm("anthropic", server), tmp_path / "first"))
        assert len(server.calls) == 2
    replay = ReplayConfig()
    setattr(replay, "from", str(tmp_path / "first"))
    summary = run_job(job(replay, tmp_path / "again"))  # the server is gone: nothing may call it
    events = [e for p in (tmp_path / "again").glob("jobs/*/events.jsonl") for e in read_events(p)]
    calls = [e for e in events if isinstance(e, ModelCalled)]
    assert {(c.provider, c.model, c.error) for c in calls} == {("replay", "fake-model", None)}
    assert sorted(c.usage.input_tokens for c in calls) == [11, 22] and summary.usage.cost_usd == 0
    assert summary.extractions == {"prose": 2}


@pytest.mark.parametrize("method", sorted(p.stem for p in (REPO_ROOT / "conf" / "method").glob("*.yaml")))
def test_every_method_yaml_names_a_class_that_builds(method):
    # kgb.methods.build imports what `_target_` names: no registry to keep in step
    cfg = compose_job(f"method={method}", "model=anthropic", "model.name=some-model", "method.dir=kernels")
    module_name, _, class_name = cfg.method._target_.rpartition(".")
    assert isinstance(getattr(importlib.import_module(module_name), class_name), type)
    assert "_target_" not in cfg.method.identity()  # moving a class keeps results' keys


def test_a_method_target_that_names_nothing_is_refused_with_its_name():
    from kgb.config import ExpertConfig
    from kgb.methods import build

    with pytest.raises(ValueError, match="'expert': _target_ 'kgb.methods.nowhere.Gone' names no class"):
        build(ExpertConfig(_target_="kgb.methods.nowhere.Gone"))


def test_an_agent_trial_resumed_on_another_day_gets_logged_answers_for_the_days_in_its_prompts(
        tmp_path, key, monkeypatch):
    """The CLIs write the day into their system prompts (Claude Code 2026-12-06, OpenCode Sun
    Dec 06 2026): a trial killed one evening and resumed the next morning matched none of its
    logged requests and paid for every call again. The log holds the day as a placeholder, and
    a reply that names it gets the resumed attempt's day back."""
    from datetime import date

    from kgb.models import model

    def prompt(day: date) -> str:
        return f"Today's date: {day.isoformat()}\nToday's date: {day.strftime('%a %b %d %Y')}\nwrite a kernel"

    evening, morning = date(2026, 12, 6), date(2026, 12, 7)
    monkeypatch.setattr(model, "today", lambda: evening)
    with FakeLLMServer(Queue([Answer(f"wrote it on {evening.isoformat()}")])) as server:
        first = trial_ctx(tmp_path)
        first.model = models.build(llm("anthropic", server)).for_trial(first)
        first.model.trial_dir = str(tmp_path / "attempt-1")
        assert ask(first, prompt(evening)).text == "wrote it on 2026-12-06"
    prior = read_events(first.log.path)
    first.log.close()
    logged = BlobStore(tmp_path / "blobs").get(called(first)[0].request_blob)
    assert "2026-12-06" not in logged and "Sun Dec 06 2026" not in logged and model.TODAY_JS in logged
    monkeypatch.setattr(model, "today", lambda: morning)
    with FakeLLMServer(Queue([Answer("paid again")])) as server:
        resumed = trial_ctx(tmp_path, prior=prior)
        resumed.model = models.build(llm("anthropic", server)).for_trial(resumed)
        resumed.model.trial_dir = str(tmp_path / "attempt-2")
        assert ask(resumed, prompt(morning)).text == "wrote it on 2026-12-07"
        assert server.calls == []


def test_an_agent_attempt_across_midnight_logs_both_days_as_the_placeholder(tmp_path, key, monkeypatch):
    """An attempt that starts one evening may send either day after midnight (a CLI writes the
    day it started or the day of the call): both are logged as the placeholder, so that its
    resume matches (CI, session 58: the new day's date logged as written, every call paid
    again on the resume)."""
    from datetime import date

    from kgb.models import model

    evening, morning = date(2026, 12, 6), date(2026, 12, 7)
    monkeypatch.setattr(model, "today", lambda: evening)
    with FakeLLMServer(Queue([Answer("one"), Answer("two")])) as server:
        ctx = trial_ctx(tmp_path)
        ctx.model = models.build(llm("anthropic", server)).for_trial(ctx)
        ctx.model.trial_dir = str(tmp_path / "attempt-1")
        monkeypatch.setattr(model, "today", lambda: morning)  # midnight passes during the attempt
        ask(ctx, "Today's date: 2026-12-06\nthe day it started")
        ask(ctx, "Today's date: 2026-12-07\nthe day of the call")
    blobs = BlobStore(tmp_path / "blobs")
    for call in called(ctx):
        logged = blobs.get(call.request_blob)
        assert "2026-12-0" not in logged and f"Today's date: {model.TODAY_ISO}" in logged
