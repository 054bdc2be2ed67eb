"""How a job's MLflow runs end when the job does not run to its end: Ctrl-C, and a trial
resumed after it.

Ctrl-C left the job's run RUNNING, its metrics up to a minute old, until the job ran again;
a resumed agent trial's run showed only the checks its last attempt judged anew (those of
the earlier attempt are answered from the log, not logged again), often none.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

import kgb.run
from kgb.config import (
    ChipConfig,
    Config,
    EvalConfig,
    ExpertConfig,
    ModelConfig,
    SourceConfig,
    TrackingConfig,
)
from kgb.evaluate import Status
from kgb.evaluate.verdict import Verdict
from kgb.operators import REPO_ROOT
from kgb.run import Interrupted, run_job
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateChecked,
    CandidateEvaluated,
    CandidateProposed,
    Event,
    FinalKernelChosen,
    FinalRule,
    ModelCalled,
    RunFinished,
    RunStarted,
    SessionEnd,
    SessionFinished,
    SessionStarted,
    ToolCalled,
    TrialEnd,
    TrialFinished,
    TrialStarted,
    TurnTaken,
    WorkspaceSnapshotted,
)
from kgb.tracking.log import read_events

OPS = ["aten::add", "aten::sub"]
ADD = (REPO_ROOT / "operators/aten/add/solution.py").read_text()


@pytest.fixture(scope="module")
def empty_store(tmp_path_factory) -> Path:
    """A new MLflow SQLite store, made once: MLflow's schema migrations take seconds."""
    path = tmp_path_factory.mktemp("store") / "mlflow.db"
    MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


def store(empty_store: Path, path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(empty_store, path)
    return f"sqlite:///{path}"


def expert_job(root: Path) -> Config:
    """Two trials, one at a time: the first finishes, Ctrl-C comes during the second."""
    return Config(method=ExpertConfig(concurrency=1), model=ModelConfig(), source=SourceConfig("aten"),
                  chip=ChipConfig(name="cpu", backend="cpu"), eval=EvalConfig(cases="smoke"),
                  tracking=TrackingConfig(root=str(root)), ops=OPS)


def ctrl_c_in_the_second_trial(monkeypatch) -> None:
    """The KeyboardInterrupt reaches the job's thread from the trials' pool, where it handles
    a Ctrl-C; the second trial is the last, so no other starts after it."""
    real = kgb.run.run_trial
    calls: list[int] = []

    def run_trial(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(kgb.run, "run_trial", run_trial)


def job_run(uri: str):
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("kgb").experiment_id
    [run] = client.search_runs([experiment], "tags.`kgb.kind` = 'job'")
    trials = client.search_runs([experiment], "tags.`kgb.kind` = 'trial'")
    return run, len(trials)


def test_ctrl_c_ends_the_jobs_run_killed_and_up_to_date_and_a_resume_finishes_it(tmp_path, empty_store, monkeypatch):
    from kgb.tracking.__main__ import main as tracking

    root = tmp_path / "out"
    uri = store(empty_store, root / "mlflow.db")
    ctrl_c_in_the_second_trial(monkeypatch)
    with pytest.raises(Interrupted, match="1 of 2 trials finished are kept"):
        run_job(expert_job(root))
    [log] = root.glob("jobs/*/events.jsonl")
    end = read_events(log)[-1]
    assert isinstance(end, RunFinished) and end.interrupted and end.trials_run == 2
    run, trials = job_run(uri)
    assert (run.info.status, run.data.metrics["trials"], trials) == ("KILLED", 1.0, 1)
    assert run.info.end_time == int(end.ts * 1000)

    # the log says so: a store rebuilt from it ends the run the same way
    rebuilt = store(empty_store, tmp_path / "rebuilt" / "mlflow.db")
    assert tracking(["rebuild", str(root), "--tracking-uri", rebuilt]) == 0
    run, trials = job_run(rebuilt)
    assert (run.info.status, run.data.metrics["trials"], trials) == ("KILLED", 1.0, 1)

    monkeypatch.undo()
    assert run_job(expert_job(root)).correct == 2  # the same job, resumed: it runs the cut trial only
    run, trials = job_run(uri)
    assert (run.info.status, run.data.metrics["trials"], trials) == ("FINISHED", 2.0, 2)


def test_a_second_ctrl_c_exits_at_once_while_mlflow_catches_up(tmp_path, monkeypatch):
    """A store that keeps the interrupted job's last call waiting (a server gone, a store still
    being made): the second Ctrl-C ends the wait, and the job still says what it keeps."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    main = threading.main_thread().ident
    asked: list[float] = []

    class Stuck:
        def project(self, events, blobs):
            if isinstance(events[-1], RunFinished):  # the job's last call: waits, until Ctrl-C again
                asked.append(time.monotonic())
                threading.Timer(0.2, signal.pthread_kill, (main, signal.SIGINT)).start()
                threading.Event().wait(60)

    monkeypatch.setattr(kgb.run, "open_projection", lambda cfg: Stuck())
    ctrl_c_in_the_second_trial(monkeypatch)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(Interrupted, match="1 of 2 trials finished are kept"):
            run_job(expert_job(tmp_path))
        left = time.monotonic()
    finally:
        signal.signal(signal.SIGINT, handler)
    assert len(asked) == 1 and left - asked[0] < 5
    [log] = tmp_path.glob("jobs/*/events.jsonl")
    end = read_events(log)[-1]
    assert isinstance(end, RunFinished) and end.interrupted  # what the job's next run, or a rebuild, projects


def test_a_trial_that_ends_after_ctrl_c_is_in_the_jobs_last_projection_or_left_to_its_next_run(tmp_path, monkeypatch):
    """Ctrl-C while two trials run: the job logs its run's end, brings MLflow up to date and
    exits (run.py: at once, whatever still runs), and the other trial goes on meanwhile. It
    ended after the run's end was logged, so that the job's last projection call did not
    have it, and it reached MLflow only with the job's next run: the job's run said KILLED
    with a trial fewer than its log held (session 47's user walk). Every end the log holds
    when the job exits must be in what that last call projected."""
    monkeypatch.setattr(kgb.run, "longest_first", lambda ops, device: list(ops))  # OPS[0]'s trial is awaited first
    other_runs = threading.Event()
    real = kgb.run.run_trial

    def run_trial(method, chip, spec, settings, log, *args, **kwargs):
        if spec.id == OPS[0]:  # Ctrl-C, while the other trial runs
            assert other_runs.wait(60)
            raise KeyboardInterrupt
        other_runs.set()
        ended = real(method, chip, spec, settings, log, *args, **kwargs)
        deadline = time.monotonic() + 60  # it ends once the job has logged the run's end
        while not any(isinstance(e, RunFinished) for e in log.events()) and time.monotonic() < deadline:
            time.sleep(0.01)
        return ended

    last: list[Event] = []

    class Recording:
        def project(self, events, blobs):
            if isinstance(events[-1], RunFinished):  # the call the job waits on before it exits
                last[:] = events

    monkeypatch.setattr(kgb.run, "run_trial", run_trial)
    monkeypatch.setattr(kgb.run, "open_projection", lambda cfg: Recording())
    job = dataclasses.replace(expert_job(tmp_path), method=ExpertConfig(concurrency=2))
    before = set(threading.enumerate())
    with pytest.raises(Interrupted) as interrupted:
        run_job(job)
    for thread in set(threading.enumerate()) - before:  # the trial left running ends (run.py would exit)
        if thread.name.startswith("ThreadPoolExecutor"):
            thread.join(60)
    [log] = tmp_path.glob("jobs/*/events.jsonl")
    ended = {e.trial for e in read_events(log) if isinstance(e, TrialFinished)}
    assert ended == {e.trial for e in last if isinstance(e, TrialFinished)}
    assert f"{len(ended)} of 2 trials finished are kept" in str(interrupted.value)

    monkeypatch.undo()  # the job's next run ends what this one did not, judging nothing twice
    monkeypatch.setattr(kgb.run, "open_projection", lambda cfg: Recording())
    assert run_job(job).correct == 2
    judged = [e.trial for e in read_events(log) if isinstance(e, CandidateEvaluated)]
    assert sorted(judged) == sorted(set(judged)) and len(judged) == 2


# --- a resumed agent trial -------------------------------------------------------------

def resumed_agent_trial(blobs: BlobStore) -> list[Event]:
    """method=autokernel stopped (Ctrl-C, or a kill) after the agent's own check, then run
    again: the second attempt replays the first, its check answered from the log, then
    checks kernel.py itself (a harness check) and ends. The events a user's walk logged."""
    put = blobs.put
    ok = Verdict(Status.CORRECT, "correct")
    job = dict(job="j")
    trial = dict(job="j", trial="t")

    def started() -> RunStarted:
        return RunStarted(**job, method="autokernel", model="fake", source="aten", chip="cpu", config={},
                          git_commit=None, packages={}, device="cpu", driver=None, specs={}, n_ops=1)

    def call(n: int, text: str, tools: list[dict]) -> ModelCalled:
        return ModelCalled(**trial, provider="anthropic", model="fake", request_hash=f"h{n}", request_blob=put(f"r{n}"),
                           response_blob=put(text), tool_uses_blob=put(json.dumps(tools)) if tools else None)

    write = {"id": "toolu_1", "name": "write_file", "input": {"path": "kernel.py"}}
    check = {"id": "toolu_2", "name": "check", "input": {}}

    def replayed(attempt: int) -> list[Event]:  # what each attempt logs of the first two turns
        return [
            TrialStarted(**trial, op="aten::add", spec_version=1, sample=0, attempt=attempt),
            WorkspaceSnapshotted(**trial, manifest_blob=put("{}"), files=0, reason="start: empty kernel.py"),
            SessionStarted(**trial, session=1, driver="loop", protocol="autokernel", prompt_blob=put("Write add.")),
            *([call(1, "I write the kernel.", [write])] if attempt == 1 else []),  # replayed: not logged again
            TurnTaken(**trial, session=1, turn=1, request_hash="h1", tool_calls=1),
            ToolCalled(**trial, session=1, turn=1, call_id="toolu_1", tool="write_file", input_blob=put("{}"),
                       result_blob=put("wrote kernel.py")),
            *([call(2, "", [check])] if attempt == 1 else []),
            TurnTaken(**trial, session=1, turn=2, request_hash="h2", tool_calls=1),
            *([CandidateProposed(**trial, candidate="c1-add", source_blob=put(ADD), produced_by="toolu_2"),
               CandidateChecked(**trial, candidate="c1-add", verdict=ok, call_id="toolu_2")] if attempt == 1 else []),
            ToolCalled(**trial, session=1, turn=2, call_id="toolu_2", tool="check", input_blob=put("{}"),
                       result_blob=put("candidate: c1-add\nstatus: correct")),
        ]

    events = [started(), *replayed(1), started(), *replayed(2), call(3, "kernel.py is finished.", []),
              TurnTaken(**trial, session=1, turn=3, request_hash="h3"),
              SessionFinished(**trial, session=1, end=SessionEnd.DONE, turns=3),
              WorkspaceSnapshotted(**trial, manifest_blob=put("{}"), files=0, reason="session 1 ended (done)"),
              CandidateProposed(**trial, candidate="c2-add", source_blob=put(ADD)),
              CandidateChecked(**trial, candidate="c2-add", verdict=ok, call_id="harness: experiment 1"),
              FinalKernelChosen(**trial, rule=FinalRule.BEST_CHECK, reason="the best correct check, c2-add",
                                checked="c2-add", source_blob=put(ADD)),
              CandidateProposed(**trial, candidate="c3-add", source_blob=put(ADD), parents=("c2-add",)),
              CandidateEvaluated(**trial, candidate="c3-add", verdict=ok),
              TrialFinished(**trial, end=TrialEnd.COMPLETED),
              RunFinished(**job, wall_s=1.0, trials_run=1, trials_skipped_as_done=0)]
    return [dataclasses.replace(e, seq=i, ts=1000.0 + i) for i, e in enumerate(events)]


def test_a_resumed_agent_trials_run_shows_the_checks_of_every_attempt(tmp_path, empty_store):
    from kgb.tracking.mlflow_projection import MlflowProjection

    blobs = BlobStore(tmp_path / "blobs")
    events = resumed_agent_trial(blobs)
    uri = store(empty_store, tmp_path / "mlflow.db")
    MlflowProjection(uri, "kgb", background=False).project(events, blobs)
    client = MlflowClient(uri)
    [run] = client.search_runs([client.get_experiment_by_name("kgb").experiment_id], "tags.`kgb.kind` = 'trial'")
    metrics = run.data.metrics
    assert (metrics["agent_checks"], metrics["agent_checks_correct"]) == (2, 2)  # as the trials table counts them
    assert (metrics["agent_sessions"], metrics["agent_turns"], metrics["agent_tool_calls"]) == (1, 3, 2)  # the last attempt's
    history = client.get_metric_history(run.info.run_id, "check_correct")
    assert [(m.step, m.value) for m in history] == [(1, 1.0), (2, 1.0)]
    checks = json.loads(Path(client.download_artifacts(run.info.run_id, "agent/checks.json")).read_text())
    assert [(c["step"], c["candidate"], c["correct"]) for c in checks] == [(1, "c1-add", True), (2, "c2-add", True)]
    # the transcript shows the replayed check where the replay answered it, and the replayed turns' replies
    transcript = Path(client.download_artifacts(run.info.run_id, "agent/transcript.md")).read_text()
    turn2 = transcript[transcript.index("## Turn 2"):transcript.index("## Turn 3")]
    assert turn2.index("- calls `check`") < turn2.index("**check** c1-add: correct") < turn2.index("### check")
    assert "I write the kernel." in transcript and transcript.count("**check**") == 1
    assert "**harness: experiment 1's check** c2-add: correct" in transcript


def test_a_ctrl_c_while_the_baselines_load_leaves_no_run_started_without_an_end(tmp_path, monkeypatch):
    """A timed job reads every job's baselines under the root (seconds, under a full one) before
    it logs its run as started: a Ctrl-C there leaves nothing for the queries to read as a run
    that never ended. Until session 48 the run was logged first, and the Ctrl-C left it open."""
    import dataclasses

    real = kgb.run.eval_settings

    def timed(*args, **kwargs):  # as on a GPU: bench cases timed, so the book is read
        return dataclasses.replace(real(*args, **kwargs), time_cases=("bench",))

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(kgb.run, "eval_settings", timed)
    monkeypatch.setattr(kgb.run, "load_book", ctrl_c)
    root = tmp_path / "out"
    config = expert_job(root)
    config.tracking.mlflow = False
    with pytest.raises(KeyboardInterrupt):
        run_job(config)
    for log in root.glob("jobs/*/events.jsonl"):
        kinds = [type(e) for e in read_events(log)]
        assert RunStarted not in kinds or RunFinished in kinds, kinds
