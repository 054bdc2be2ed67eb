"""A replay model's calls (`model=replay`, kgb.models.replay) answer from completions logged
earlier: they carry the recorded call's tokens, but nothing was paid for them. The job's
closing summary and its MLflow runs (job and trials) count them as the queries do
(kgb.query.scope): spend 0 tokens and $0, the recorded tokens apart as replayed tokens. Until
session 47 both counted them as spent, the leaderboard beside them saying 0."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from fake_llm_server import Answer, FakeLLMServer
from mlflow.tracking import MlflowClient

from kgb.config import (
    ChipConfig,
    Config,
    EvalConfig,
    LLMConfig,
    OneshotConfig,
    PriceConfig,
    ReplayConfig,
    SourceConfig,
    TrackingConfig,
)
from kgb.models.replay import ReplayProvider
from kgb.query import trial_rows
from kgb.run import run_job
from kgb.tracking.events import ModelCalled, TrialEnd, TrialFinished, TrialStarted
from kgb.tracking.mlflow_projection import trial_metrics
from kgb.tracking.projections import REPLAYED, summarize, trial_outcomes
from kgb.usage import Usage

PRICE = PriceConfig(input=3.0, output=15.0)
ANSWERS = {"aten::add": Answer("I cannot.", input=1100, output=30), "aten::softmax": Answer("Nor I.", input=2200, output=40)}
RECORDED = 1100 + 30 + 2200 + 40
SPEND = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
         "total_tokens", "cost_usd")


def job(model, root: Path) -> Config:
    return Config(method=OneshotConfig(), model=model, source=SourceConfig("aten"),
                  chip=ChipConfig(name="cpu", backend="cpu"), eval=EvalConfig(cases="smoke"),
                  tracking=TrackingConfig(root=str(root), mlflow=True), ops=sorted(ANSWERS))


def runs(root: Path, kind: str) -> list:
    client = MlflowClient(f"sqlite:///{root / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("kgb").experiment_id
    return client.search_runs([experiment], f"tags.`kgb.kind` = '{kind}'")


def test_a_replay_jobs_summary_and_mlflow_runs_count_its_tokens_as_replayed_not_spent(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KGB_TEST_KEY", "sk-test-key")

    def by_op(call):
        return next(a for op, a in ANSWERS.items() if f"`{op}`" in call.prompt)

    with FakeLLMServer(by_op) as server:
        paid = run_job(job(LLMConfig(name="fake-model", provider="anthropic", base_url=server.url,
                                     api_key_env="KGB_TEST_KEY", price=PRICE), tmp_path / "first"))
    cost = (3300 * 3.0 + 70 * 15.0) / 1e6
    assert (paid.usage.total_tokens, paid.usage.cost_usd) == (RECORDED, pytest.approx(cost))  # paid: spend
    assert paid.replayed == Usage()
    assert "replayed_tokens" not in runs(tmp_path / "first", "job")[0].data.metrics

    replay = ReplayConfig(price=PRICE)  # a price given to a replay still pays nothing
    setattr(replay, "from", str(tmp_path / "first"))
    capsys.readouterr()
    summary = run_job(job(replay, tmp_path / "again"))  # the server is gone: nothing may call it
    closing = capsys.readouterr().out

    assert (summary.usage.total_tokens, summary.usage.cost_usd) == (0, 0.0)
    assert summary.replayed.total_tokens == RECORDED
    assert summary.metrics()["replayed_tokens"] == RECORDED
    assert "tokens 0  cost $0.0000" in closing  # the closing line: what this run paid
    assert "replayed tokens 3370" in summary.replayed_note
    assert summary.replayed_note in closing  # printed under the closing line
    assert "note: cost $0 because" not in closing  # nothing was paid for, priced or not

    [job_run] = runs(tmp_path / "again", "job")
    m = job_run.data.metrics
    assert {k: m[k] for k in SPEND} == dict.fromkeys(SPEND, 0.0)
    assert m["replayed_tokens"] == RECORDED
    trials = {r.data.tags["kgb.op"]: r.data.metrics for r in runs(tmp_path / "again", "trial")}
    assert set(trials) == set(ANSWERS)
    for op, answer in ANSWERS.items():
        assert {k: trials[op][k] for k in SPEND} == dict.fromkeys(SPEND, 0.0), op
        assert trials[op]["replayed_tokens"] == answer.input + answer.output
        assert trials[op]["model_calls"] == 1
    # the trials table keeps the tokens the calls carried: the queries tell them apart by the
    # job's model.provider (kgb.query.scope), as they do in tables written before this rule
    table = {r.op: r for r in trial_rows(f"sqlite:///{tmp_path / 'again' / 'mlflow.db'}")}
    assert sum(r.total_tokens for r in table.values()) == RECORDED and sum(r.cost_usd for r in table.values()) == 0


def _call(trial: str, provider: str, usage: Usage) -> ModelCalled:
    return ModelCalled(job="j", trial=trial, provider=provider, model="claude", request_hash="h",
                       request_blob="h", response_blob="r", usage=usage)


def test_the_fold_counts_replayed_calls_apart_whatever_their_recorded_cost():
    paid, recorded = Usage(input_tokens=900, output_tokens=100, cost_usd=0.5), Usage(input_tokens=400, output_tokens=50, cost_usd=0.2)
    events = [
        TrialStarted(job="j", trial="t1", op="aten::add", spec_version=1, sample=0),
        _call("t1", "anthropic", paid),
        _call("t1", REPLAYED, recorded),
        TrialFinished(job="j", trial="t1", end=TrialEnd.NO_CANDIDATE),
        TrialStarted(job="j", trial="t2", op="aten::mul", spec_version=1, sample=0),
        _call("t2", REPLAYED, recorded),
        TrialFinished(job="j", trial="t2", end=TrialEnd.NO_CANDIDATE),
    ]
    outcomes = trial_outcomes([dataclasses.replace(e, seq=i) for i, e in enumerate(events)])
    t1, t2 = outcomes["t1"], outcomes["t2"]
    assert (t1.usage, t1.replayed) == (paid, dataclasses.replace(recorded, cost_usd=0.0))
    assert (t2.usage, t2.replayed.total_tokens) == (Usage(), 450)
    assert trial_metrics(t2)["total_tokens"] == 0 and trial_metrics(t2)["replayed_tokens"] == 450
    assert "replayed_tokens" not in trial_metrics(dataclasses.replace(t1, calls=t1.calls[:1]))
    s = summarize(list(outcomes.values()))
    assert (s.usage.total_tokens, s.usage.cost_usd, s.replayed.total_tokens) == (1000, 0.5, 900)
    assert s.metrics()["total_tokens"] == 1000 and s.metrics()["replayed_tokens"] == 900


def test_the_fold_knows_the_replay_provider_by_its_name():
    assert ReplayProvider.name == REPLAYED


def test_a_replays_calls_cost_nothing_so_a_job_cost_budget_never_stops_it(tmp_path, monkeypatch):
    """The job's cost budget (model.max_job_cost_usd) counts what calls cost as they are logged:
    a replay given a price logged each call at that price, and its budget stopped the job
    after the first, though nothing was paid."""
    monkeypatch.setenv("KGB_TEST_KEY", "sk-test-key")

    def by_op(call):
        return next(a for op, a in ANSWERS.items() if f"`{op}`" in call.prompt)

    with FakeLLMServer(by_op) as server:
        run_job(job(LLMConfig(name="fake-model", provider="anthropic", base_url=server.url,
                              api_key_env="KGB_TEST_KEY", price=PRICE), tmp_path / "first"))
    replay = ReplayConfig(price=PRICE, max_job_cost_usd=1e-6)
    setattr(replay, "from", str(tmp_path / "first"))
    cfg = dataclasses.replace(job(replay, tmp_path / "again"), method=dataclasses.replace(OneshotConfig(), concurrency=1))
    summary = run_job(cfg)
    assert summary.trials == len(ANSWERS)  # no trial left unfinished by the budget
    log = next((tmp_path / "again" / "jobs").glob("*/events.jsonl"))
    from kgb.tracking.log import read_events

    calls = [e for e in read_events(log) if isinstance(e, ModelCalled)]
    assert len(calls) == len(ANSWERS) and all(c.usage.cost_usd == 0 for c in calls)
