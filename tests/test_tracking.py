"""The event log: typed round trips, torn lines, schema versions, blobs, projections."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from kgb.evaluate.verdict import CaseResult, Status, Verdict
from kgb.tracking.blobs import BlobStore
from kgb.tracking.encoding import to_json
from kgb.tracking.events import (
    EVENT_TYPES,
    CandidateEvaluated,
    CandidateProposed,
    ModelCalled,
    RunFinished,
    TrialEnd,
    TrialFinished,
    TrialStarted,
)
from kgb.tracking.log import EventLog, NewerSchemaError, read_events
from kgb.tracking.projections import TrialStatus, summarize, trial_outcomes
from kgb.usage import Usage

GOLDEN = Path(__file__).parent / "golden"


def verdict(status: Status, lat: float | None = None, base: float | None = None) -> Verdict:
    case = CaseResult("c", "bench", status, latency_us=lat, baseline_us=base)
    return Verdict(status, str(status), (case,))


def test_every_event_type_round_trips(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    originals = [
        TrialStarted(job="j", trial="t", op="aten::add", spec_version=1, sample=0),
        ModelCalled(job="j", trial="t", provider="anthropic", model="m", request_hash="h", request_blob="b",
                    response_blob=None, usage=Usage(input_tokens=3, output_tokens=4), raw_usage={"x": 1}),
        CandidateProposed(job="j", trial="t", candidate="c1", source_blob="s", parents=("c0",)),
        CandidateEvaluated(job="j", trial="t", candidate="c1", verdict=verdict(Status.CORRECT, 2.0, 3.0)),
        TrialFinished(job="j", trial="t", end=TrialEnd.COMPLETED),
    ]
    stamped = [log.append(e) for e in originals]
    log.close()
    assert [e.seq for e in stamped] == list(range(5))
    assert read_events(tmp_path / "events.jsonl") == stamped
    assert {type(e).kind for e in originals} <= set(EVENT_TYPES)


def test_torn_last_line_is_skipped_and_cut_before_appending(tmp_path):
    path = tmp_path / "events.jsonl"
    log = EventLog(path)
    log.append(TrialStarted(job="j", trial="t", op="aten::add", spec_version=1, sample=0))
    log.close()
    with path.open("a") as f:
        f.write('{"kind": "TrialFinished", "job": "j", "tri')  # a kill mid-write
    assert len(read_events(path)) == 1
    log = EventLog(path)
    log.append(TrialFinished(job="j", trial="t", end=TrialEnd.COMPLETED))
    log.close()
    events = read_events(path)
    assert [type(e).__name__ for e in events] == ["TrialStarted", "TrialFinished"]
    assert events[1].seq == 1
    assert list(log.events()) == events  # the copy in memory that the job loop folds is the file's


def test_corruption_in_the_middle_raises(tmp_path):
    path = tmp_path / "events.jsonl"
    good = json.dumps(to_json(TrialStarted(job="j", trial="t", op="a::b", spec_version=1, sample=0)))
    path.write_text(f"{good}\nnot json\n{good}\n")
    with pytest.raises(ValueError, match="corrupt"):
        read_events(path)


def test_newer_schema_is_refused_clearly(tmp_path):
    record = to_json(TrialStarted(job="j", trial="t", op="a::b", spec_version=1, sample=0))
    record["schema_version"] = 99
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(NewerSchemaError, match="upgrade kgb"):
        read_events(path)


def test_golden_v1_log_still_reads():
    events = read_events(GOLDEN / "events-v1.jsonl")
    outcomes = trial_outcomes(events)
    assert [t.status for t in outcomes.values()] == [TrialStatus.CORRECT]
    assert isinstance(events[-1], RunFinished)


def test_blobs_are_content_addressed(tmp_path):
    store = BlobStore(tmp_path)
    h = store.put("kernel source")
    assert store.put("kernel source") == h
    assert store.get(h) == "kernel source"
    with pytest.raises(ValueError):
        store.get("../../etc/passwd")


def _trial(key, op, *verdicts, end=TrialEnd.COMPLETED, usage=None):
    events = [TrialStarted(job="j", trial=key, op=op, spec_version=1, sample=0)]
    if usage:
        events.append(ModelCalled(job="j", trial=key, provider="p", model="m", request_hash="h",
                                  request_blob="b", response_blob=None, usage=usage))
    for i, v in enumerate(verdicts):
        events.append(CandidateProposed(job="j", trial=key, candidate=f"c{i}", source_blob="s"))
        events.append(CandidateEvaluated(job="j", trial=key, candidate=f"c{i}", verdict=v))
    events.append(TrialFinished(job="j", trial=key, end=end))
    return events


def test_projection_picks_the_fastest_correct_candidate_and_aggregates():
    events = (
        _trial("a", "aten::a", verdict(Status.WRONG_OUTPUT), verdict(Status.CORRECT, 4.0, 8.0),
               verdict(Status.CORRECT, 2.0, 8.0), usage=Usage(input_tokens=100, output_tokens=50))
        + _trial("b", "aten::b", verdict(Status.CORRECT, 10.0, 5.0))
        + _trial("c", "aten::c", verdict(Status.COMPILE_ERROR), verdict(Status.WRONG_OUTPUT))
        + _trial("d", "aten::d", end=TrialEnd.NO_CANDIDATE)
        + _trial("e", "aten::e", end=TrialEnd.SKIPPED)
    )
    outcomes = trial_outcomes(events)
    assert outcomes["a"].best.id == "c2" and outcomes["a"].speedup == pytest.approx(4.0)
    assert outcomes["c"].status == TrialStatus.WRONG_OUTPUT
    assert outcomes["d"].status == TrialStatus.NO_CANDIDATE
    assert outcomes["e"].status == TrialStatus.SKIPPED
    s = summarize(list(outcomes.values()))
    assert (s.trials, s.correct, s.skipped) == (4, 2, 1)
    assert s.accuracy == pytest.approx(0.5)
    assert s.fast[1.0] == pytest.approx(0.25) and s.fast[0.8] == pytest.approx(0.25)
    assert s.geomean_speedup == pytest.approx((4.0 * 0.5) ** 0.5)
    assert s.usage.total_tokens == 150 and s.tokens_per_success == pytest.approx(75)


def test_whether_fast_p_is_reported_is_one_rule_for_the_summary_and_the_tables():
    """fast_p means something only where the job timed its cases (its settings line says so):
    a GPU job whose every trial failed has 0 of its operators faster, where a CPU job has no
    fast_p at all. Until session 43 the job's summary (the closing line, MLflow's job metrics)
    decided it from the best verdicts' device, and left it out for such a GPU job, which the
    leaderboard and the report (from the settings line) gave as 0."""
    from kgb.tracking.summary import reports_speed

    outcomes = list(trial_outcomes(_trial("a", "aten::a", verdict(Status.WRONG_OUTPUT))
                                   + _trial("b", "aten::b", verdict(Status.COMPILE_ERROR))).values())
    gpu, cpu = "cases=smoke,check,bench timed=bench judge=v23", "cases=smoke judge=v23"
    assert summarize(outcomes, gpu).fast == {0.8: 0.0, 1.0: 0.0, 1.5: 0.0}
    assert summarize(outcomes, cpu).fast == {}
    assert summarize([], gpu).fast == {}  # nothing ran: undefined, as the leaderboard's None
    from io import StringIO

    from kgb.progress import summary_table

    line = StringIO()
    summary_table(outcomes, summarize(outcomes, gpu), line)
    assert "fast_1.0 0.000" in line.getvalue()  # the closing line says it too
    assert reports_speed(gpu, []) and not reports_speed(cpu, [0.0, 0.0])
    assert reports_speed("", [1.3])  # a table written before the settings line: by its speedups


def test_the_summary_table_names_each_sample_where_a_job_has_several():
    """`method.samples=3` printed `aten::sin correct` three times, with nothing to tell the
    rows apart (session 46's user walk)."""
    import dataclasses
    from io import StringIO

    from kgb.progress import summary_table

    events = []
    for sample, v in enumerate((verdict(Status.CORRECT), verdict(Status.WRONG_OUTPUT))):
        trial = _trial(f"s{sample}", "aten::sin", v)
        events += [dataclasses.replace(trial[0], sample=sample), *trial[1:]]
    outcomes = list(trial_outcomes(events).values())
    out = StringIO()
    summary_table(outcomes, summarize(outcomes), out)
    rows = [line.split() for line in out.getvalue().splitlines() if line.startswith("aten::")]
    assert rows == [["aten::sin", "#0", "correct"], ["aten::sin", "#1", "wrong_output"]]
    out = StringIO()
    summary_table(outcomes[:1], summarize(outcomes[:1]), out)
    assert [line.split() for line in out.getvalue().splitlines() if line.startswith("aten::")] == [["aten::sin", "correct"]]


def test_unfinished_trial_is_not_counted():
    events = _trial("a", "aten::a", verdict(Status.CORRECT))[:-1]
    outcome = trial_outcomes(events)["a"]
    assert not outcome.finished
    assert summarize([outcome]).trials == 0


# --- the MLflow projection and the trials tables -------------------------------------

def _bench():
    """benchmarks/tracking.py, whose synthesis builds sweeps from real event logs."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_tracking", Path(__file__).parent.parent / "benchmarks/tracking.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """60 trials in 10 jobs, shaped like the golden log's real trial."""
    bench = _bench()
    root = tmp_path_factory.mktemp("sweep")
    logs = bench.synthesise(60, bench.templates([GOLDEN / "events-v1.jsonl"]), root)
    return root, logs


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory) -> Path:
    """A new MLflow SQLite store, made once: MLflow's schema migrations take seconds."""
    from mlflow.tracking import MlflowClient

    path = tmp_path_factory.mktemp("store") / "mlflow.db"
    MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def store(empty_store, tmp_path):
    """A fresh copy of the empty store; a function that gives the URI of another copy."""
    import shutil

    def new(name: str = "mlflow.db") -> str:
        shutil.copy(empty_store, tmp_path / name)
        return f"sqlite:///{tmp_path / name}"

    return new


def _rebuild(root: Path, uri: str) -> None:
    from kgb.tracking.__main__ import main

    assert main(["rebuild", str(root), "--tracking-uri", uri]) == 0


def test_a_rebuild_run_again_gives_the_same_leaderboard_with_each_trial_once(sweep, store):
    from kgb.query import trial_rows, trial_runs
    from kgb.query.leaderboard import render, rows

    root, _ = sweep
    uri = store()
    _rebuild(root, uri)
    first = render(rows(trial_rows(uri)), "csv")
    _rebuild(root, uri)
    assert render(rows(trial_rows(uri)), "csv") == first
    keys = [(r.data.tags["kgb.job"], r.data.tags["kgb.trial"]) for r in trial_runs(uri)]
    assert len(keys) == len(set(keys)) == 60
    table = rows(trial_rows(uri))
    assert sum(r.trials + r.skipped for r in table) == 60 and len(table) == 10


def test_projecting_after_each_trial_writes_what_a_rebuild_writes(sweep, store):
    """The incremental fold, the background follower and the appended trials table end
    where one projection of the whole log ends."""
    from kgb.query import trial_rows
    from kgb.tracking.mlflow_projection import MlflowProjection

    root, logs = sweep
    blobs = BlobStore(root / "blobs")
    live_uri, whole_uri = store("live.db"), store("whole.db")
    live = MlflowProjection(live_uri, "kgb")
    events = read_events(logs[0])
    for i, e in enumerate(events):
        if isinstance(e, TrialFinished | RunFinished) or i == 0:
            live.project(events[: i + 1], blobs)
    MlflowProjection(whole_uri, "kgb", background=False).project(events, blobs)

    def view(uri):
        return sorted((r.trial, r.status, r.speedup, r.total_tokens, r.start_ms, r.end_ms) for r in trial_rows(uri))

    assert view(live_uri) == view(whole_uri) and len(view(live_uri)) == 6


def test_trial_runs_have_times_reasons_and_open_as_training_runs(tmp_path, store):
    from mlflow.tracking import MlflowClient

    from kgb.query import trial_runs
    from kgb.tracking.mlflow_projection import MlflowProjection

    blobs = BlobStore(tmp_path / "blobs")
    kernel = blobs.put("import triton\n")
    events = [_started()] + _trial("a", "aten::a", verdict(Status.CORRECT, 2.0, 4.0)) + _trial("b", "aten::b", Verdict(
        Status.COMPILE_ERROR, "triton.CompilationError: at 3:4: unsupported"))
    events = [dataclasses.replace(e, seq=i, ts=1000.0 + i) for i, e in enumerate(events)]
    events = [dataclasses.replace(e, source_blob=kernel) if isinstance(e, CandidateProposed) else e for e in events]
    uri = store()
    MlflowProjection(uri, "kgb").project(events, blobs)
    runs = {r.data.tags["kgb.op"]: r for r in trial_runs(uri)}
    assert runs["aten::b"].data.tags["kgb.reason"] == "triton.CompilationError: at 3:4: unsupported"
    assert "kgb.reason" not in runs["aten::a"].data.tags
    a = runs["aten::a"].info
    assert (a.start_time, a.end_time, a.status) == (1001000, 1004000, "FINISHED")  # TrialStarted .. TrialFinished
    assert runs["aten::a"].data.metrics["speedup"] == pytest.approx(2.0)
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("kgb")
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    job = client.get_run(runs["aten::a"].data.tags["mlflow.parentRunId"])
    assert job.data.params["chip.name"] == "auto" and job.data.params["chip.resolved"] == "cpu"
    assert {a.path for a in client.list_artifacts(a.run_id)} == {"kernel.py", "trial.json"}


def test_a_jobs_wall_s_is_the_time_it_took_and_trial_s_its_trials_summed(tmp_path, store):
    """Two trials of 3 s each at once, in a run of 4 s, and a resumed run of 1 s: until
    session 44 the job run's wall_s was the trials' seconds summed (103.9 s for a job that
    took 54.0 s, in a user's walk), which is its trial_s now."""
    from mlflow.tracking import MlflowClient

    from kgb.tracking.mlflow_projection import MlflowProjection

    def timed(events: list) -> list:
        return [dataclasses.replace(e, wall_s=3.0) if isinstance(e, TrialFinished) else e for e in events]

    events = ([_started()] + timed(_trial("a", "aten::a", verdict(Status.CORRECT)) + _trial("b", "aten::b", verdict(
        Status.CORRECT))) + [RunFinished(job="j", wall_s=4.0, trials_run=2, trials_skipped_as_done=0), _started(),
                             RunFinished(job="j", wall_s=1.0, trials_run=0, trials_skipped_as_done=2)])
    blobs = BlobStore(tmp_path / "blobs")
    kernel = blobs.put("import triton\n")
    events = [dataclasses.replace(e, seq=i, ts=1000.0 + i) for i, e in enumerate(events)]
    events = [dataclasses.replace(e, source_blob=kernel) if isinstance(e, CandidateProposed) else e for e in events]
    uri = store()
    MlflowProjection(uri, "kgb", background=False).project(events, blobs)
    (job,) = MlflowClient(uri).search_runs([MlflowClient(uri).get_experiment_by_name("kgb").experiment_id],
                                           "tags.`kgb.kind` = 'job'")
    assert (job.data.metrics["wall_s"], job.data.metrics["trial_s"]) == (5.0, 6.0)


def test_jobs_of_one_method_configured_otherwise_are_rows_of_their_own(tmp_path, store):
    """Two `method=files` jobs over two users' folders, and aiko with `method.agent.max_turns=4`
    beside its defaults, were pass@N-merged into one leaderboard row each (a user's walk): the
    projection names a job's parameters that are not its method's defaults in the table's
    header, and the queries keep them apart."""
    from kgb.method_params import defaults
    from kgb.query import trial_rows
    from kgb.query.leaderboard import rows
    from kgb.tracking.mlflow_projection import MlflowProjection

    aiko = defaults("aiko")
    jobs = {"files-a": ("files", {"name": "files", "dir": "/tmp/k"}),
            "files-b": ("files", {"name": "files", "dir": "/home/u/kernels"}),
            "aiko-d": ("aiko", aiko), "aiko-4": ("aiko", {**aiko, "agent": {**aiko["agent"], "max_turns": 4}})}
    blobs = BlobStore(tmp_path / "blobs")
    kernel = blobs.put("import triton\n")
    uri = store()
    projection = MlflowProjection(uri, "kgb", background=False)
    for job, (method, identity) in jobs.items():
        started = dataclasses.replace(_started(), method=method, identity={"method": identity})
        events = [started] + _trial(f"{job}-t", "aten::a", verdict(Status.CORRECT))
        events = [dataclasses.replace(e, job=job, seq=i, ts=1000.0 + i) for i, e in enumerate(events)]
        events = [dataclasses.replace(e, source_blob=kernel) if isinstance(e, CandidateProposed) else e for e in events]
        projection.project(events, blobs)
    assert sorted((r.method, r.trials) for r in rows(trial_rows(uri))) == [
        ("aiko", 1), ("aiko agent.max_turns=4", 1), ("files dir=/home/u/kernels", 1), ("files dir=/tmp/k", 1)]


def test_a_table_of_version_1_reads_its_jobs_as_their_plain_method():
    """Tables written before `method_params`: read, the method as it was."""
    from kgb.tracking.summary import COLUMNS, TABLE_VERSION, parse

    head = {"version": 1, "job": "j", "method": "aiko", "model": "m", "source": "aten", "chip": "cpu",
            "settings": "cpu", "columns": COLUMNS}
    values = {c: 0 for c in COLUMNS} | {"source": "aten", "trial": "t", "op": "aten::a", "status": "correct",
                                         "correct": True, "speedup": None, "reason": "", "run_id": "r"}
    (row,) = parse(json.dumps(head) + "\n" + json.dumps([values[c] for c in COLUMNS]) + "\n")
    assert (row.method, row.method_params, row.method_label) == ("aiko", "", "aiko")
    assert TABLE_VERSION == 2  # an older kgb refuses the new tables rather than pool their jobs


def _started():
    from kgb.tracking.events import RunStarted

    return RunStarted(job="j", method="expert", model="none", source="aten", chip="cpu",
                      config={"chip": {"name": "auto"}}, git_commit=None, packages={}, device="cpu",
                      driver=None, specs={}, n_ops=2)


def test_identical_kernels_are_stored_once(tmp_path):
    from kgb.tracking.artifacts import ArtifactWriter

    writer = ArtifactWriter(client=None)
    runs = tmp_path / "mlartifacts"
    for run in ("r1", "r2"):
        writer.write(run, (runs / run / "artifacts").as_uri(), {"kernel.py": "same kernel", "trial.json": run})
    one, two = (runs / r / "artifacts" / "kernel.py" for r in ("r1", "r2"))
    assert one.read_text() == two.read_text() == "same kernel"
    assert one.stat().st_ino == two.stat().st_ino  # one file on disk
    assert (runs / "r2/artifacts/trial.json").read_text() == "r2"


def test_a_kernel_artifact_is_a_link_to_its_blob(tmp_path):
    """A blob's bytes are neither read nor written again for a trial run: the artifact is
    the blob's own file (and survives the blob's deletion, as a hard link does)."""
    from kgb.tracking.artifacts import ArtifactWriter, Stored

    blobs = BlobStore(tmp_path / "blobs")
    digest = blobs.put("kernel source\r\n")  # bytes kept exactly, line ending included
    folder = tmp_path / "mlartifacts" / "r1" / "artifacts"
    ArtifactWriter(client=None).write("r1", folder.as_uri(), {"kernel.py": Stored(blobs, digest)})
    kernel = folder / "kernel.py"
    assert kernel.stat().st_ino == (tmp_path / "blobs" / digest[:2] / digest).stat().st_ino
    os.unlink(tmp_path / "blobs" / digest[:2] / digest)
    assert kernel.read_bytes() == b"kernel source\r\n"


def test_a_live_logs_view_and_outcomes_cost_nothing_per_trial(tmp_path):
    """events() is a view fixed at its length (later appends do not show in it), and each
    trial's outcome is folded as its events are appended, not by a re-fold of the log."""
    log = EventLog(tmp_path / "events.jsonl")
    log.append(TrialStarted(job="j", trial="t1", op="aten::add", spec_version=1, sample=0))
    view = log.events()
    log.append(TrialFinished(job="j", trial="t1", end=TrialEnd.NO_CANDIDATE, reason="none"))
    assert len(view) == 1 and [e.seq for e in view] == [0] and view[-1].seq == 0 and view[1:] == []
    assert len(log.events()) == 2 and log.events()[-1].seq == 1 and log.events()[-2:] == list(log.events())
    with pytest.raises(IndexError):
        view[1]
    assert log.outcome("t1").status == TrialStatus.NO_CANDIDATE and log.outcome("t1").reason == "none"
    log.close()
    reopened = EventLog(tmp_path / "events.jsonl")  # an earlier run's trials, folded on opening
    assert reopened.outcome("t1").finished and list(reopened.outcomes()) == ["t1"]
    reopened.close()


def test_a_torn_last_table_line_is_skipped():
    from kgb.tracking.summary import JobInfo, header, parse

    head = header(JobInfo("j", "expert", "none", "aten", "cpu"))
    assert parse(head) == []
    assert parse(head + '["half a line') == []


def test_a_store_that_is_not_sql_gives_the_same_rows(sweep, tmp_path, monkeypatch, store):
    """MLflow's public client path (a tracking server in practice) for writing and reading."""
    from kgb.query import trial_rows
    from kgb.tracking.mlflow_projection import MlflowProjection

    root, logs = sweep
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    file_uri, sql_uri = (tmp_path / "files").as_uri(), store()
    for uri in (file_uri, sql_uri):
        projection = MlflowProjection(uri, "kgb", background=False)
        for path in logs[:2]:
            projection.project(read_events(path), BlobStore(root / "blobs"))

    def view(uri):
        return sorted((r.job, r.trial, r.status, r.speedup) for r in trial_rows(uri))

    assert view(file_uri) == view(sql_uri) and len(view(sql_uri)) == 12


def test_best_without_a_store_says_so_and_creates_nothing(tmp_path):
    import subprocess
    import sys

    repo = Path(__file__).parent.parent
    done = subprocess.run([sys.executable, "-m", "kgb.query", "best", "--op", "aten::add", "--chip", "cpu",
                           "--dest", str(tmp_path / "k")], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(repo)}, timeout=120)
    assert done.returncode == 1
    (message,) = done.stderr.strip().splitlines()
    assert message.startswith(f"error: no MLflow store at {tmp_path.resolve() / 'outputs' / 'mlflow.db'} ")
    assert "--tracking-uri sqlite:///" in message and "nothing was created" in message
    assert list(tmp_path.iterdir()) == []


def test_a_projection_opening_beside_the_trials_keeps_them_going_and_says_why_it_failed(tmp_path):
    """run.py opens MLflow in the background (kgb.tracking.follower.Opening) while the trials
    run. A call made meanwhile returns at once (each waited for the opening until session 45:
    a 2-core machine's trials stood 10-28 s behind the first one), the opening projects the
    latest log it was given, the job's last call waits for it, and an opening that failed
    fails the next call."""
    import threading

    from kgb.tracking.follower import Opening

    blobs = BlobStore(tmp_path)
    opened = threading.Event()
    seen: list[list[str]] = []

    class Slow:
        def project(self, events, _blobs):
            seen.append([getattr(e, "kind", e) for e in events])

    def make():
        opened.wait(5)
        return Slow()

    opening = Opening(make, lambda: ["RunStarted"], blobs)
    opening.project(["RunStarted", "TrialStarted"], blobs)  # returns while the store opens
    opening.project(["RunStarted", "TrialStarted", "TrialFinished"], blobs)
    assert seen == [] and not opened.is_set()
    threading.Timer(0.2, opened.set).start()
    end = RunFinished(job="j", wall_s=1.0, trials_run=1, trials_skipped_as_done=0)
    opening.project(["RunStarted", "TrialStarted", "TrialFinished", end], blobs)  # the last call waits
    assert seen == [["RunStarted"], ["RunStarted", "TrialStarted", "TrialFinished"],
                    ["RunStarted", "TrialStarted", "TrialFinished", "RunFinished"]]

    def broken():
        raise RuntimeError("the tracking store refused the connection")

    failed = Opening(broken, lambda: [], blobs)
    with pytest.raises(RuntimeError, match="refused the connection"):
        failed.project([end], blobs)


def test_a_resumed_job_names_the_kept_trials_judged_under_another_spec_of_the_same_version():
    """A trial's key names its spec's VERSION, not its text: a spec edited without a bump (a
    tolerance, a case) leaves the trials judged under the old text standing; the run says so."""
    import dataclasses

    from kgb import operators
    from kgb.job import changed_specs, spec_record

    spec = operators.load("aten::softmax")
    before = dataclasses.replace(_started(), specs={"aten::softmax": "v1:0123456789abcdef", "aten::add": "v1:x"})
    events = [before, *_trial("k", "aten::softmax", verdict(Status.CORRECT)),
              *_trial("l", "aten::add", verdict(Status.CORRECT))[:-1]]  # add's trial did not finish
    specs = {"aten::softmax": spec, "aten::add": operators.load("aten::add")}
    assert changed_specs(events, specs, {"aten::softmax", "aten::add"}) == ["aten::softmax"]
    assert changed_specs(events, specs, {"aten::add"}) == []  # softmax's trial is judged again: not kept
    again = dataclasses.replace(before, specs={"aten::softmax": spec_record(spec)})
    assert changed_specs([*events, again, *_trial("k", "aten::softmax", verdict(Status.CORRECT))], specs,
                         {"aten::softmax"}) == []  # judged again under today's text


def test_jobs_that_start_at_once_make_one_store_between_them(tmp_path):
    """Two jobs started together into a new tracking.root raced through MLflow's migrations
    of the SQLite store, and one died of it (session 44: in 7 of 9 processes started three at
    a time, before the store was made under a lock)."""
    import subprocess
    import sys

    code = ("import sys; from kgb.tracking.mlflow_projection import MlflowProjection; "
            "MlflowProjection(sys.argv[1], 'kgb', background=False)")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    procs = [subprocess.Popen([sys.executable, "-c", code, uri], stderr=subprocess.PIPE, text=True) for _ in range(3)]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], "\n".join(e[-500:] for e in errors)
