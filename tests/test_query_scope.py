"""What the queries count beyond the jobs' trials tables (a user's walk found each one
corrupting what the leaderboard and the report said): a job that Ctrl-C interrupted and
nobody resumed, an operator since removed from the source, and a replay model's recorded
tokens. Events are synthesised and projected into a SQLite store as a job would."""

from __future__ import annotations

import csv
import dataclasses
import io
import time
from pathlib import Path

import pytest

from kgb.evaluate.verdict import CaseResult, Status, Verdict
from kgb.query.__main__ import main
from kgb.query.store import Store
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateEvaluated,
    CandidateProposed,
    ModelCalled,
    RunFinished,
    RunStarted,
    TrialEnd,
    TrialFinished,
    TrialStarted,
)
from kgb.tracking.mlflow_projection import MlflowProjection
from kgb.usage import Usage

SMOKE = "cpu cases=smoke timeout=300s judge=v26"
GONE = "aten::an_operator_since_removed"  # in an old job's table, not in operators/ today


def verdict(correct: bool) -> Verdict:
    if not correct:
        return Verdict(Status.WRONG_OUTPUT, "mismatch at [0]")
    return Verdict(Status.CORRECT, "ok", (CaseResult("smoke-0", "smoke", Status.CORRECT),), device="cpu")


def trial(job: str, op: str, correct: bool, blobs: BlobStore, provider: str, model: str, usage: Usage) -> list:
    key = f"{job}-{op}"
    return [TrialStarted(job=job, trial=key, op=op, spec_version=1, sample=0),
            ModelCalled(job=job, trial=key, provider=provider, model=model, request_hash=f"h-{op}",
                        request_blob=blobs.put(f"write {op}"), response_blob=blobs.put(f"# {op}"), usage=usage),
            CandidateProposed(job=job, trial=key, candidate="c1", source_blob=blobs.put(f"# {op}")),
            CandidateEvaluated(job=job, trial=key, candidate="c1", verdict=verdict(correct)),
            TrialFinished(job=job, trial=key, end=TrialEnd.COMPLETED, wall_s=1.0)]


PAID = Usage(input_tokens=900, output_tokens=100, cost_usd=0.5)


@dataclasses.dataclass
class Job:
    """One job's log, run by run: `run` appends a run that judges `results` and ends as told."""

    id: str
    blobs: BlobStore
    provider: str = "anthropic"
    model: str = "claude"
    usage: Usage = PAID
    events: list = dataclasses.field(default_factory=list)

    def run(self, planned: list[str], results: dict[str, bool], end: str = "finished") -> list:
        config = {"method": {"name": "oneshot"}, "model": {"name": self.model, "provider": self.provider}}
        self.events.append(RunStarted(
            job=self.id, method="oneshot", model=self.model, source="aten", chip="cpu", config=config,
            git_commit=None, packages={}, device="cpu", driver=None, specs={op: "v1:x" for op in planned},
            n_ops=len(planned), settings=SMOKE, identity={"method": {"name": "oneshot"}},
            trial_keys=tuple(f"{self.id}-{op}" for op in planned)))
        for op, correct in results.items():
            self.events += trial(self.id, op, correct, self.blobs, self.provider, self.model, self.usage)
        if end != "running":  # a job still running, or killed without a word (kill -9), logged no end
            self.events.append(RunFinished(job=self.id, wall_s=1.0, trials_run=len(results),
                                           trials_skipped_as_done=0, interrupted=end == "interrupted"))
        start = time.time() - 600
        return [dataclasses.replace(e, seq=i, ts=start + i) for i, e in enumerate(self.events)]


def project(root: Path, *logs: list) -> str:
    uri = f"sqlite:///{root / 'mlflow.db'}"
    projection = MlflowProjection(uri, "kgb", background=False)
    for events in logs:
        projection.project(events, BlobStore(root / "blobs"))
    return uri


def leaderboard(uri: str, capsys) -> dict[tuple[str, str], dict[str, str]]:
    """The leaderboard's CSV rows by (method, model): every job here is judged under one setting."""
    capsys.readouterr()  # what an earlier command printed
    assert main(["leaderboard", "--format", "csv", "--tracking-uri", uri]) == 0
    return {(r["method"], r["model"]): r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}


def report(uri: str, dest: Path, table: str) -> list[dict[str, str]]:
    assert main(["report", "--no-plots", "--dest", str(dest), "--tracking-uri", uri]) == 0
    return list(csv.DictReader(io.StringIO((dest / f"{table}.csv").read_text())))


# --- 1: a job that Ctrl-C interrupted ------------------------------------------------------

def test_an_interrupted_job_says_how_many_of_its_operators_were_judged(tmp_path, capsys):
    """Its two unjudged operators read as unsolved: accuracy 1/3 for the one judged and solved."""
    blobs = BlobStore(tmp_path / "blobs")
    stopped = Job("stopped", blobs)
    ops = ["aten::add", "aten::mul", "aten::sub"]
    uri = project(tmp_path, stopped.run(ops, {"aten::add": True}, end="interrupted"))
    row = leaderboard(uri, capsys)["oneshot", "claude"]
    assert (row["trials"], row["correct"], row["accuracy"]) == ("1", "1", "1.000")  # over what was judged
    assert row["incomplete"] == "interrupted: 1 of 3 operators judged"
    [accuracy] = report(uri, tmp_path / "report", "accuracy")
    assert (accuracy["operators"], accuracy["not judged"], accuracy["accuracy"]) == ("1", "2", "1.0")
    md = (tmp_path / "report" / "accuracy.md").read_text()
    assert "not judged" in md and "interrupted" in md  # the table says what the column means

    # resumed and finished: complete, its rates over all three
    project(tmp_path, stopped.run(ops, {"aten::mul": True, "aten::sub": False}))
    row = leaderboard(uri, capsys)["oneshot", "claude"]
    assert (row["trials"], row["correct"], row["incomplete"]) == ("3", "2", "")
    [accuracy] = report(uri, tmp_path / "report", "accuracy")
    assert (accuracy["operators"], accuracy["not judged"]) == ("3", "0")


def test_a_job_that_logged_no_end_is_unfinished_and_another_job_can_judge_what_it_left(tmp_path, capsys):
    blobs = BlobStore(tmp_path / "blobs")
    running = Job("running", blobs, model="glm")
    ops = ["aten::add", "aten::mul", "aten::sub", "aten::div"]
    whole = Job("whole", blobs, model="qwen")
    narrow = Job("narrow", blobs, model="qwen")  # an ops= job of the same row, interrupted after mul
    uri = project(tmp_path, running.run(ops, {"aten::add": False}, end="running"),
                  whole.run(ops, dict.fromkeys(ops, True)),
                  narrow.run(["aten::mul", "aten::sub"], {"aten::mul": True}, end="interrupted"))
    board = leaderboard(uri, capsys)
    assert board["oneshot", "glm"]["incomplete"] == "unfinished: 1 of 4 operators judged"
    assert (board["oneshot", "glm"]["accuracy"], board["oneshot", "glm"]["trials"]) == ("0.000", "1")
    assert board["oneshot", "qwen"]["incomplete"] == ""  # sub, which narrow left, the whole job judged
    assert board["oneshot", "qwen"]["trials"] == "4"



def test_a_job_interrupted_before_any_trial_finished_has_a_row_that_says_so(tmp_path, capsys):
    """Ctrl-C while its first trials ran (an agent's run for up to 30 minutes): its trials table
    held no row, and the job was in no query's output, or the store read as having no trials."""
    blobs = BlobStore(tmp_path / "blobs")
    ops = ["aten::add", "aten::mul", "aten::sub"]
    uri = project(tmp_path, Job("stopped", blobs).run(ops, {}, end="interrupted"))
    row = leaderboard(uri, capsys)["oneshot", "claude"]
    assert (row["source"], row["chip"], row["settings"]) == ("aten", "cpu", SMOKE)
    assert (row["trials"], row["correct"], row["accuracy"], row["total_tokens"]) == ("0", "0", "", "0")
    assert row["incomplete"] == "interrupted: 0 of 3 operators judged"
    [accuracy] = report(uri, tmp_path / "report", "accuracy")
    assert (accuracy["operators"], accuracy["not judged"], accuracy["accuracy"]) == ("0", "3", "")
    capsys.readouterr()  # the report's paths
    assert main(["portability", "--format", "csv", "--tracking-uri", uri]) == 0
    [port] = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert (port["trials"], port["incomplete"]) == ("0", "interrupted: 0 of 3 operators judged")


def test_a_job_running_its_first_trials_has_a_row_beside_the_finished_ones(tmp_path, capsys):
    blobs = BlobStore(tmp_path / "blobs")
    ops = ["aten::add", "aten::mul"]
    uri = project(tmp_path, Job("done", blobs).run(ops, dict.fromkeys(ops, True)),
                  Job("running", blobs, model="glm").run(ops, {}, end="running"))
    board = leaderboard(uri, capsys)
    assert board["oneshot", "glm"]["incomplete"] == "unfinished: 0 of 2 operators judged"
    assert (board["oneshot", "claude"]["trials"], board["oneshot", "claude"]["incomplete"]) == ("2", "")


def test_a_trial_the_infrastructure_cut_short_is_not_judged_and_the_row_says_so(tmp_path, capsys):
    """A provider down through its retries, a judge killed from outside, a full disk: the trial
    ends infra_error, no verdict on the method, retried by the job's next run. Counted, its
    operator read as one the method failed (accuracy 1/2 for a method that solved all it was
    judged on); and it hid an earlier job's judged trial of the same row."""
    blobs = BlobStore(tmp_path / "blobs")
    ops = ["aten::add", "aten::mul"]
    cut = Job("cut", blobs)
    events = cut.run(ops, {"aten::add": True})
    at = events[-1]  # RunFinished: the cut trial is logged before it
    cut_short = [TrialStarted(job="cut", trial="cut-aten::mul", op="aten::mul", spec_version=1, sample=0),
                 TrialFinished(job="cut", trial="cut-aten::mul", end=TrialEnd.INFRA_ERROR, wall_s=1.0,
                               reason="the provider stayed down through 5 retries")]
    events = events[:-1] + [dataclasses.replace(e, seq=at.seq + i, ts=at.ts + i) for i, e in enumerate(cut_short)] \
        + [dataclasses.replace(at, seq=at.seq + 2, ts=at.ts + 2)]
    uri = project(tmp_path, events)
    row = leaderboard(uri, capsys)["oneshot", "claude"]
    assert (row["trials"], row["correct"], row["accuracy"]) == ("1", "1", "1.000")
    assert row["incomplete"] == "trials cut short: 1 of 2 operators judged"
    [accuracy] = report(uri, tmp_path / "report", "accuracy")
    assert (accuracy["operators"], accuracy["not judged"]) == ("1", "1")

    # an earlier job of the same row judged mul: its trial counts, not the later cut one
    earlier = Job("earlier", blobs)
    project(tmp_path, [dataclasses.replace(e, ts=e.ts - 3600)
                       for e in earlier.run(["aten::mul"], {"aten::mul": False})])
    row = leaderboard(uri, capsys)["oneshot", "claude"]
    assert (row["trials"], row["correct"], row["incomplete"]) == ("2", "1", "")


# --- 2: an operator removed from the source ------------------------------------------------

def test_an_operator_removed_from_the_source_no_longer_counts_and_the_row_says_so(tmp_path, capsys):
    """An `ops=` job never run again kept the removed operator's trial in its table."""
    blobs = BlobStore(tmp_path / "blobs")
    old = Job("old-ops-job", blobs)
    uri = project(tmp_path, old.run(["aten::add", GONE], {"aten::add": True, GONE: False}))
    row = leaderboard(uri, capsys)["oneshot", "claude"]
    assert (row["trials"], row["correct"], row["accuracy"], row["removed"]) == ("1", "1", "1.000", "1")
    assert row["total_tokens"] == "1000"  # what was spent on operators that count
    assert row["incomplete"] == ""  # the removed operator is not one left unjudged
    [accuracy] = report(uri, tmp_path / "report", "accuracy")
    assert (accuracy["operators"], accuracy["correct"], accuracy["removed"]) == ("1", "1", "1")
    [cost] = report(uri, tmp_path / "report", "cost")
    assert (cost["operators"], cost["tokens"]) == ("1", "1000")


# --- 3: a replay model's recorded tokens --------------------------------------------------

def test_a_replay_models_recorded_tokens_are_not_spend(tmp_path, capsys):
    """`model=replay` answers from logged completions, for free; its calls carry the recorded
    call's tokens, which the spend columns counted as if paid again."""
    blobs = BlobStore(tmp_path / "blobs")
    paid = Job("paid", blobs)
    replay = Job("replayed", blobs, provider="replay", model="replay", usage=dataclasses.replace(PAID, cost_usd=0.0))
    # model.name=claude picks the recorded model by name: the replay shares the paid job's row
    named = Job("replayed-named", blobs, provider="replay", usage=dataclasses.replace(PAID, cost_usd=0.0))
    uri = project(tmp_path, paid.run(["aten::add"], {"aten::add": True}), replay.run(["aten::add"], {"aten::add": True}),
                  named.run(["aten::mul"], {"aten::mul": True}))
    board = leaderboard(uri, capsys)
    assert (board["oneshot", "replay"]["total_tokens"], board["oneshot", "replay"]["cost_usd"]) == ("0", "0.000")
    assert board["oneshot", "replay"]["tokens_per_success"] == "0.000"
    assert board["oneshot", "replay"]["replayed_tokens"] == "1000"  # shown apart, not as spend
    claude = board["oneshot", "claude"]
    assert (claude["trials"], claude["total_tokens"], claude["replayed_tokens"]) == ("2", "1000", "1000")
    cost = {r["model"]: r for r in report(uri, tmp_path / "report", "cost")}
    assert (cost["replay"]["tokens"], cost["replay"]["USD"], cost["replay"]["replayed tokens"]) == ("0", "0.0", "1000")
    assert (cost["claude"]["tokens"], cost["claude"]["replayed tokens"]) == ("1000", "1000")


# --- the store read both ways -------------------------------------------------------------

def test_a_tracking_server_gives_the_same_job_facts(tmp_path):
    """The SQL read and MLflow's client (what a tracking server is read through) agree on
    each job's end and provider."""
    blobs = BlobStore(tmp_path / "blobs")
    uri = project(tmp_path, Job("stopped", blobs).run(["aten::add", "aten::mul"], {"aten::add": True}, end="interrupted"),
                  Job("replayed", blobs, provider="replay").run(["aten::add"], {"aten::add": True}),
                  Job("running", blobs).run(["aten::add"], {}, end="running"))
    sql = Store(uri)
    client = Store(uri)
    client.path = None  # read as a non-SQLite store is: through MlflowClient
    facts = lambda store: sorted((r.job, r.status, r.provider) for r in store.job_runs())  # noqa: E731
    assert facts(sql) == facts(client) == [("replayed", "FINISHED", "replay"), ("running", "RUNNING", "anthropic"),
                                           ("stopped", "KILLED", "anthropic")]


@pytest.mark.parametrize("command", ["leaderboard", "portability"])
def test_every_query_that_counts_operators_leaves_a_removed_one_out(tmp_path, capsys, command):
    blobs = BlobStore(tmp_path / "blobs")
    uri = project(tmp_path, Job("old", blobs).run(["aten::add", GONE], {"aten::add": True, GONE: False}))
    assert main([command, "--format", "csv", "--tracking-uri", uri]) == 0
    [row] = csv.DictReader(io.StringIO(capsys.readouterr().out))
    assert (row["trials"], row["correct"], row["removed"]) == ("1", "1", "1")


def test_the_figures_count_the_judged_operators_and_name_an_interrupted_job():
    """The plots draw from the report's operators: those judged, the legend saying what is missing."""
    from kgb.query.plots import job_spend, per_job
    from kgb.query.report import op_results
    from kgb.query.scope import End, JobFacts, Scope
    from kgb.tracking.summary import TrialRow

    values = {f.name: 0 for f in dataclasses.fields(TrialRow)}
    values.update(job="stopped", method="oneshot", model="claude", source="aten", chip="cpu", trial="t", op="aten::add",
                  sample=0, status="correct", correct=True, speedup=None, latency_us=None, baseline_us=None, reason="",
                  run_id="r", settings=SMOKE)
    trials = [TrialRow(**values), TrialRow(**values | {"trial": "g", "op": GONE, "correct": False, "status": "wrong_output"})]
    scope = Scope(frozenset({"aten::add", "aten::mul", "aten::sub"}),
                  {"stopped": JobFacts(End.INTERRUPTED, frozenset({"aten::add", "aten::mul", GONE}))})
    results = op_results(trials, scope)
    assert sorted(r.state for r in results) == ["interrupted", "judged", "removed"]  # GONE: removed, not unjudged
    [(name, ops)] = per_job(results)
    assert name == "oneshot/claude aten cpu (interrupted: 1 of 2 judged)"
    assert [r.judged for r in ops] == [True]
    assert [s.accuracy for s in job_spend(results)] == [1.0]
