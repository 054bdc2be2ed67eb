"""`python -m kgb.query portability` over a store holding two chips: a method's own runs on
nvidia and on E, and a transfer of its nvidia kernels to E (events synthesised, projected
into a SQLite store as a job would)."""

from __future__ import annotations

import csv
import dataclasses
import io
import time

import pytest
from mlflow.tracking import MlflowClient

from kgb.evaluate.verdict import CaseResult, Status, Verdict
from kgb.query.__main__ import main
from kgb.query.portability import SOURCE_PARAMS
from kgb.query.store import Store
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateEvaluated,
    CandidateProposed,
    RunFinished,
    RunStarted,
    TrialEnd,
    TrialFinished,
    TrialStarted,
)
from kgb.tracking.mlflow_projection import MlflowProjection

FULL = "cuda cases=smoke+check+bench timeout=300s timed=bench repeats=100 warmup=10 judge=v3"
SMOKE = "cuda cases=smoke timeout=300s judge=v3"


def verdict(speedup: float | None) -> Verdict:
    """Correct at `speedup` (None: wrong output)."""
    if speedup is None:
        return Verdict(Status.WRONG_OUTPUT, "mismatch at [0]")
    case = CaseResult("bench-0", "bench", Status.CORRECT, latency_us=10.0, baseline_us=10.0 * speedup)
    return Verdict(Status.CORRECT, "ok", (case,), device="cuda", baseline="torch")


def job_events(job: str, method: str, chip: str, settings: str, results: dict[str, float | None], blobs: BlobStore,
               method_config: dict | None = None) -> list:
    """`results`: aten operators (real ones: the queries leave out those not in the source)."""
    events: list = [RunStarted(
        job=job, method=method, model="claude" if method != "transfer" else "none", source="aten", chip=chip,
        config={"method": method_config or {"name": method}}, git_commit=None, packages={}, device=chip, driver=None,
        specs={}, n_ops=len(results), settings=settings, identity={"method": method_config or {"name": method}})]
    for op, speedup in results.items():
        key = f"{job}-{op}"
        events += [TrialStarted(job=job, trial=key, op=f"aten::{op}", spec_version=1, sample=0),
                   CandidateProposed(job=job, trial=key, candidate="c1", source_blob=blobs.put(f"# {op}")),
                   CandidateEvaluated(job=job, trial=key, candidate="c1", verdict=verdict(speedup)),
                   TrialFinished(job=job, trial=key, end=TrialEnd.COMPLETED, wall_s=1.0)]
    events.append(RunFinished(job=job, wall_s=4.0, trials_run=len(results), trials_skipped_as_done=0))
    start = time.time() - 600
    return [dataclasses.replace(e, seq=i, ts=start + i) for i, e in enumerate(events)]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    root = tmp_path_factory.mktemp("chips")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    blobs = BlobStore(root / "blobs")
    projection = MlflowProjection(uri, "kgb", background=False)
    transfer = {"name": "transfer", "from_method": "oneshot", "from_model": "claude", "from_chip": "nvidia", "from": "/n"}
    for events in (
        job_events("on-nvidia", "oneshot", "nvidia", FULL, {"add": 2.0, "mul": 4.0, "sub": 1.0, "div": None}, blobs),
        job_events("on-e", "oneshot", "E", FULL, {"add": 1.0, "mul": None, "sub": None, "div": None}, blobs),
        job_events("to-e", "transfer", "E", FULL, {"add": 1.0, "mul": 1.0, "sub": None, "div": None}, blobs, transfer),
        job_events("e-smoke", "oneshot", "E", SMOKE, {"add": 1.0}, blobs),  # another protocol: nothing to compare
    ):
        projection.project(events, blobs)
    return uri


def table(uri: str, capsys, *args: str) -> dict[tuple[str, str, str], dict[str, str]]:
    assert main(["portability", "--tracking-uri", uri, "--format", "csv", *args]) == 0
    found = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    return {(r["chip"], r["transferred_from"], r["settings"]): r for r in found}


def test_each_chip_against_nvidia_with_transfers_under_the_method_that_wrote_them(store, capsys):
    rows = table(store, capsys)
    assert set(rows) == {("nvidia", "", FULL), ("E", "", FULL), ("E", "nvidia", FULL), ("E", "", SMOKE)}
    assert {r["method"] for r in rows.values()} == {"oneshot"}  # the transfer is shown as oneshot's kernels
    nvidia, own, moved, smoke = rows["nvidia", "", FULL], rows["E", "", FULL], rows["E", "nvidia", FULL], rows["E", "", SMOKE]
    assert (nvidia["accuracy"], nvidia["geomean_speedup"], nvidia["accuracy_drop"]) == ("0.750", "2.000", "")
    # on E the method's own kernels solve add only: 3 of nvidia's 4 lost, 2 of them correct there
    assert (own["trials"], own["correct"], own["common"], own["accuracy_drop"]) == ("4", "1", "4", "0.500")
    assert own["speedup_ratio"] == "0.500"  # add: 1.0 on E against 2.0 on nvidia
    # nvidia's kernels on E: add and mul still correct, each at 1.0 against 2.0 and 4.0
    assert (moved["correct"], moved["accuracy_drop"], moved["speedup_ratio"]) == ("2", "0.250", "0.354")
    assert (smoke["common"], smoke["accuracy_drop"], smoke["speedup_ratio"]) == ("0", "", "")


def test_another_reference_chip(store, capsys):
    rows = table(store, capsys, "--reference", "E")
    assert rows["nvidia", "", FULL]["accuracy_drop"] == "-0.500"  # nvidia solves two more of E's four
    assert rows["E", "nvidia", FULL]["accuracy_drop"] == "-0.250"
    assert rows["E", "", FULL]["common"] == "0"  # the reference row itself


def test_the_table_format_names_every_column(store, capsys):
    assert main(["portability", "--tracking-uri", store]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert header[:6] == ["method", "model", "source", "chip", "transferred_from", "trials"]
    assert "accuracy_drop" in header and "speedup_ratio" in header


def test_a_tracking_server_gives_the_same_transfer_sources(store):
    """The SQL read and MLflow's client (what a tracking server is read through) agree."""
    sql = Store(store)
    client = Store(store)
    client.path = None  # read as a non-SQLite store is: through MlflowClient
    expected = {"to-e": {"method.from_method": "oneshot", "method.from_model": "claude", "method.from_chip": "nvidia"}}
    assert sql.job_params("transfer", SOURCE_PARAMS) == client.job_params("transfer", SOURCE_PARAMS) == expected


def test_a_transfer_of_a_configured_method_is_compared_with_that_configurations_rows(tmp_path, capsys):
    """A user's walk (session 46): the kernels of `files dir=/home/a/k` moved to E showed as
    `files`, the defaults' row, and so had no reference row to compare with (common 0)."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    blobs = BlobStore(tmp_path / "blobs")
    files = {"name": "files", "dir": "/home/a/k"}
    transfer = {"name": "transfer", "from_method": "files", "from_params": "dir=/home/a/k", "from_model": "claude",
                "from_chip": "nvidia", "from": "/n"}
    projection = MlflowProjection(uri, "kgb", background=False)
    for events in (job_events("files-nvidia", "files", "nvidia", FULL, {"add": 2.0, "mul": 4.0}, blobs, files),
                   job_events("to-e", "transfer", "E", FULL, {"add": 1.0, "mul": None}, blobs, transfer)):
        projection.project(events, blobs)
    rows = table(uri, capsys)
    moved = rows["E", "nvidia", FULL]
    assert moved["method"] == rows["nvidia", "", FULL]["method"] == "files dir=/home/a/k"
    assert (moved["common"], moved["accuracy_drop"]) == ("2", "0.500")
    # the job runs' names in the UI's list say the configuration and the job (they read files/claude/aten/nvidia)
    names = {r.info.run_name for r in MlflowClient(tracking_uri=uri).search_runs(
        [e.experiment_id for e in MlflowClient(tracking_uri=uri).search_experiments()], "tags.`kgb.kind` = 'job'")}
    assert names == {"files dir=/home/a/k/claude/aten/nvidia nvidia", "transfer from_method=files from_params=dir=/home/a/k "
                     "from_model=claude from_chip=nvidia from=/n/none/aten/E e"}


def test_a_chip_whose_trials_were_all_skipped_has_no_accuracy():
    """Skipped trials (an operator the chip cannot run) are left out of accuracy; a chip with
    nothing else read 0.000, as if it had failed every operator (session 45's user walk)."""
    from dataclasses import fields

    from kgb.query.portability import rows
    from kgb.tracking.summary import TrialRow

    values = {f.name: 0 for f in fields(TrialRow)}
    values.update(job="j", method="expert", model="none", source="aten", chip="A", trial="t", op="aten::add",
                  sample=0, status="skipped", correct=False, speedup=None, latency_us=None, baseline_us=None,
                  reason="not on this chip", run_id="r", settings="A cases=smoke")
    (row,) = rows([TrialRow(**values)], {})
    assert (row.trials, row.skipped, row.accuracy) == (0, 1, None)


def test_a_method_configured_otherwise_is_compared_with_its_own_configuration_on_the_reference():
    """`oneshot temperature=0.5` on E against the same configuration on nvidia, not against the
    defaults' row (which solves nothing there)."""
    from dataclasses import fields

    from kgb.query.portability import rows
    from kgb.tracking.summary import TrialRow

    def trial(chip: str, params: str, correct: bool) -> TrialRow:
        values = {f.name: 0 for f in fields(TrialRow)}
        values.update(job=f"{chip}{params}", method="oneshot", model="m", source="aten", chip=chip, trial=f"{chip}{params}",
                      op="aten::add", sample=0, status="correct" if correct else "wrong_output", correct=correct,
                      speedup=None, latency_us=None, baseline_us=None, reason="", run_id="r", settings="x cases=smoke",
                      method_params=params)
        return TrialRow(**values)

    table = rows([trial("nvidia", "", False), trial("nvidia", "temperature=0.5", True), trial("E", "temperature=0.5", True)], {})
    e = next(r for r in table if r.chip == "E")
    assert (e.method, e.common, e.accuracy_drop) == ("oneshot temperature=0.5", 1, 0.0)
    assert sorted(r.method for r in table) == ["oneshot", "oneshot temperature=0.5", "oneshot temperature=0.5"]


@pytest.mark.parametrize("judged", [{}, {"add": 1.0}], ids=["before any trial", "after one"])
def test_an_interrupted_transfer_has_one_row_under_the_method_that_wrote_its_kernels(tmp_path, capsys, judged):
    """A transfer job interrupted before its first trial finished, or after one: its row is the
    transferred one (oneshot's kernels from nvidia), never a second one under `transfer`."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    blobs = BlobStore(tmp_path / "blobs")
    transfer = {"name": "transfer", "from_method": "oneshot", "from_model": "claude", "from_chip": "nvidia", "from": "/n"}
    started, *trials, _ = job_events("to-e", "transfer", "E", FULL, judged, blobs, transfer)
    planned = {"aten::add": "v1:x", "aten::mul": "v1:x"}
    stopped = RunFinished(job="to-e", wall_s=1.0, trials_run=len(judged), trials_skipped_as_done=0, interrupted=True)
    events = [dataclasses.replace(started, specs=planned, n_ops=2), *trials, stopped]
    projection = MlflowProjection(uri, "kgb", background=False)
    projection.project(job_events("on-nvidia", "oneshot", "nvidia", FULL, {"add": 2.0, "mul": 4.0}, blobs), blobs)
    projection.project([dataclasses.replace(e, seq=i, ts=time.time() - 60 + i) for i, e in enumerate(events)], blobs)
    rows = table(uri, capsys)
    assert set(rows) == {("nvidia", "", FULL), ("E", "nvidia", FULL)}
    moved = rows["E", "nvidia", FULL]
    assert (moved["method"], moved["model"], moved["trials"]) == ("oneshot", "claude", str(len(judged)))
    assert moved["incomplete"] == f"interrupted: {len(judged)} of 2 operators judged"


def test_a_reference_chip_the_store_has_not_is_refused_naming_its_chips(store, capsys):
    """A misspelt `--reference nvidai` gave rc 0 and blank columns (session 49's user walk)."""
    capsys.readouterr()
    assert main(["portability", "--tracking-uri", store, "--reference", "nvidai"]) == 1
    out = capsys.readouterr()
    assert out.out == "" and out.err == f"error: no trial on chip nvidai in {store}; its chips: E, nvidia\n"
    assert main(["portability", "--tracking-uri", store, "--reference", "nvidia"]) == 0  # spelt right
