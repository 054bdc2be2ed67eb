"""Which trials a re-run of a job judges again, and which it keeps: an edited kernel file is a
new trial; an operator added to a source is a new trial of the same job, and one removed no
longer counts; a trial the job's cost budget stopped has no result and goes on with a larger
budget. Jobs run in this process, their kernels judged for real in the Triton interpreter."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from fake_llm_server import Answer, FakeLLMServer
from mlflow.tracking import MlflowClient

from kgb import operators
from kgb.config import (
    ChipConfig,
    Config,
    EvalConfig,
    ExpertConfig,
    FilesConfig,
    LLMConfig,
    ModelConfig,
    PasskConfig,
    PriceConfig,
    SourceConfig,
    TrackingConfig,
)
from kgb.methods.transfer import Kernel, SourceRun, Transfer
from kgb.operators import REPO_ROOT
from kgb.query import trial_rows
from kgb.query.leaderboard import rows
from kgb.run import run_job
from kgb.tracking.events import ModelCalled, RunStarted, TrialFinished, TrialStarted
from kgb.tracking.log import read_events
from kgb.tracking.projections import TrialOutcome, summarize
from kgb.usage import Usage

ADD = (REPO_ROOT / "operators/aten/add/solution.py").read_text()
TORCH_ADD = ("import torch\n\n\ndef add_Tensor(self, other, *, alpha=1):\n    return self + alpha * other\n\n\n"
             "def add_Scalar(self, other, alpha=1):\n    return self + alpha * other\n")


def job(method, root: Path, ops: list[str], model=None, mlflow: bool = False) -> Config:
    return Config(method=method, model=model or ModelConfig(), source=SourceConfig("aten"),
                  chip=ChipConfig(name="cpu", backend="cpu"), eval=EvalConfig(cases="smoke"),
                  tracking=TrackingConfig(root=str(root), mlflow=mlflow), ops=ops)


def the_log(root: Path) -> list:
    (log,) = root.glob("jobs/*/events.jsonl")  # one job, whatever its runs
    return read_events(log)


def ends(events: list) -> list[tuple[str, str]]:
    op = {e.trial: e.op for e in events if isinstance(e, TrialStarted)}
    return [(op[e.trial], e.end.value) for e in events if isinstance(e, TrialFinished)]


# --- A: method=files judges the file it reads, whatever it was before ----------------------

def test_an_edited_or_added_file_is_judged_again_and_an_unchanged_one_is_not(tmp_path, capsys):
    kernels, root = tmp_path / "kernels", tmp_path / "out"
    kernels.mkdir()
    files = lambda: job(FilesConfig(dir=str(kernels)), root, ["aten::add"])  # noqa: E731
    assert run_job(files()).accuracy == 0.0  # no file yet: no_candidate
    (kernels / "aten__add.py").write_text(TORCH_ADD)
    assert run_job(files()).accuracy == 0.0  # rejected: it computes with PyTorch
    (kernels / "aten__add.py").write_text(ADD)
    capsys.readouterr()
    summary = run_job(files())
    assert "note: 1 operator(s) are judged again: what method=files reads for them changed since (aten::add)" in capsys.readouterr().out
    assert (summary.trials, summary.correct) == (1, 1)  # this run's trial, not the rejected one beside it
    run_job(files())
    assert [e for _, e in ends(the_log(root))] == ["no_candidate", "completed", "completed"]


def test_a_relative_folder_from_two_places_is_two_jobs_not_one(tmp_path, monkeypatch):
    """`method.dir=k` run from two folders named two folders of kernels, but one job: the
    second's kernels were judged as a change of the first's and replaced its result in the
    job's row (session 49's user walk). The folder is made absolute where the config is."""
    root = tmp_path / "out"
    for place, text in (("a", ADD), ("b", TORCH_ADD)):
        (tmp_path / place / "k").mkdir(parents=True)
        (tmp_path / place / "k" / "aten__add.py").write_text(text)
    monkeypatch.chdir(tmp_path / "a")
    first = run_job(job(FilesConfig(dir="k"), root, ["aten::add"]))
    monkeypatch.chdir(tmp_path / "b")
    second = run_job(job(FilesConfig(dir="k"), root, ["aten::add"]))
    assert (first.correct, second.correct) == (1, 0)
    logs = sorted(root.glob("jobs/*/events.jsonl"))
    assert len(logs) == 2  # a job each, each with its own trial
    assert sorted(e.end.value for log in logs for e in read_events(log) if isinstance(e, TrialFinished)) == [
        "completed", "completed"]


def test_transfer_keys_the_kernel_it_will_judge():
    """A source run that later logged a faster kernel for the operator makes a new trial."""
    def kernel(blob: str, speedup: float, at: int) -> Kernel:
        return Kernel(SourceRun("passk", "", "m", "nvidia"), "aten::add", "j", "t", "c1", blob, True, speedup, (at, at))

    transfer = Transfer.__new__(Transfer)
    transfer.by_op = {"aten::add": [kernel("aaa", 1.2, 1)]}
    before = transfer.input_digest("aten::add")
    transfer.by_op["aten::add"].append(kernel("bbb", 1.5, 2))
    assert (before, transfer.input_digest("aten::add"), transfer.input_digest("aten::mul")) == ("aaa", "bbb", "none")


# --- B: a job over a whole source outlives changes to the source ---------------------------

def test_an_operator_added_to_the_source_is_judged_alone_in_the_same_job(tmp_path, monkeypatch):
    real = operators.discover()
    in_source = lambda *ids: monkeypatch.setattr(operators, "discover", lambda root=None: {op: real[op] for op in ids})  # noqa: E731
    expert = lambda: job(ExpertConfig(), tmp_path, [], mlflow=True)  # noqa: E731
    in_source("aten::add")
    run_job(expert())
    in_source("aten::add", "aten::mul")
    run_job(expert())
    assert [op for op, _ in ends(the_log(tmp_path))] == ["aten::add", "aten::mul"]  # add is not judged again
    in_source("aten::mul")  # add removed from the source: no longer counted
    summary = run_job(expert())
    assert (summary.trials, summary.correct) == (1, 1)
    assert [e.n_ops for e in the_log(tmp_path) if isinstance(e, RunStarted)] == [1, 2, 1]
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("kgb").experiment_id
    [parent] = client.search_runs([experiment], "tags.`kgb.kind` = 'job'")
    assert (parent.data.metrics["trials"], parent.data.metrics["correct_ops"]) == (1, 1)
    (row,) = rows(trial_rows(f"sqlite:///{tmp_path / 'mlflow.db'}"))  # the leaderboard reads the job's table
    assert (row.trials, row.correct) == (1, 1)
    run_job(job(ExpertConfig(), tmp_path, ["aten::mul"]))  # an explicit list is a job of its own
    assert len(list(tmp_path.glob("jobs/*/events.jsonl"))) == 2


# --- C: the job's cost budget stops trials, it does not fail them --------------------------

def test_a_trial_the_jobs_budget_stopped_has_no_result_and_goes_on_with_a_larger_one(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KGB_TEST_KEY", "k")
    prose = Answer("I would tile the rows.", input=1900, output=80)  # $0.0115 a call at these prices
    with FakeLLMServer(lambda call: prose) as server:
        def passk(cap: float | None) -> Config:
            model = LLMConfig(name="fake-model", provider="anthropic", base_url=server.url, api_key_env="KGB_TEST_KEY",
                              price=PriceConfig(input=5.0, output=25.0), max_job_cost_usd=cap)
            return job(PasskConfig(k=2, concurrency=1), tmp_path, ["aten::add", "aten::softmax"], model)

        stopped = run_job(passk(0.01))
        out = capsys.readouterr().out
        assert len(server.calls) == 1  # round 2 refused; the other operator's trial never started
        assert ends(the_log(tmp_path)) == [] and (stopped.trials, stopped.accuracy) == (0, None)
        spent = re.search(r"the job's cost budget is spent \((\$[0-9.]+) of model.max_job_cost_usd=0.01\): "
                          r"2 of 2 trial\(s\) have no result", out)
        assert spent and spent.group(1) == f"${stopped.usage.cost_usd:.4f}"  # as the summary's line says it
        done = run_job(passk(None))
        assert len(server.calls) == 4  # the first call is answered from the log
    events = the_log(tmp_path)
    assert sorted(ends(events)) == [("aten::add", "no_candidate"), ("aten::softmax", "no_candidate")]
    assert (done.trials, done.accuracy) == (2, 0.0) and sum(isinstance(e, ModelCalled) for e in events) == 4
    assert done.usage.cost_usd == pytest.approx(4 * 0.0115)


def test_the_summarys_cost_does_not_depend_on_the_order_calls_are_added_in():
    """0.1 + 0.2 + 0.3 is 0.6000000000000001 added left to right; the budget's note adds the log's calls."""
    def trial(key: str, *costs: float) -> TrialOutcome:
        calls = [ModelCalled(job="j", trial=key, provider="p", model="m", request_hash="h", request_blob="h",
                             response_blob=None, usage=Usage(cost_usd=c)) for c in costs]
        return TrialOutcome(key=key, op="aten::add", calls=calls)

    summary = summarize([trial("a", 0.1, 0.2), trial("b", 0.3)])
    assert summary.usage.cost_usd == math.fsum([0.3, 0.2, 0.1]) == 0.6
