"""The job's heartbeat (kgb.progress): while trials run and no line was printed for
`progress.heartbeat_s` (60 s by default; 0: none), a line says how many run and how far the
longest-running ones got.

An agent method's trial runs up to `method.agent.wall_s` (1800 s by default): a sweep of
them printed its title and then nothing for half an hour (a user's walk), as a progress
line came only when a trial ended. The unit tests run on a fake clock; the job's tests on a
short interval, their slow trial waiting for the line rather than for a fixed time."""

from __future__ import annotations

import dataclasses
import io
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

import kgb.run
from kgb.agents.config import AgentConfig, CodingAgentConfig
from kgb.config import (
    ChipConfig,
    Config,
    EvalConfig,
    ExpertConfig,
    ModelConfig,
    ProgressConfig,
    SourceConfig,
    TrackingConfig,
)
from kgb.evaluate import Status
from kgb.evaluate.verdict import CaseResult, Verdict
from kgb.progress import Progress
from kgb.run import Interrupted, run_job
from kgb.tracking.events import (
    CandidateChecked,
    CandidateEvaluated,
    Event,
    ModelCalled,
    SessionStarted,
    TrialStarted,
    TurnTaken,
)
from kgb.usage import Usage


@dataclass
class Clock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


def verdict(status: Status, speedup: float | None = None) -> Verdict:
    cases = (CaseResult("bench", "bench", status, latency_us=10.0, baseline_us=10.0 * speedup),) if speedup else ()
    return Verdict(status, "" if status == Status.CORRECT else f"{status.value}: see the log", cases=cases)


def agent_events(key: str, ts: float = 0.0) -> list[Event]:
    """An agent trial in its second session: 4 turns (the first session's 3 and one more; a
    resumed attempt logs a turn again), 3 model calls, two checks, the second correct."""
    job = "job"
    events: list[Event] = [TrialStarted(job=job, trial=key, op="aten::softmax", spec_version=1, sample=0)]
    for session, turn in ((1, 1), (1, 2), (1, 3), (1, 3), (2, 1)):
        if turn == 1:
            events.append(SessionStarted(job=job, trial=key, session=session, driver="loop", protocol="p",
                                         prompt_blob="b"))
        events.append(TurnTaken(job=job, trial=key, session=session, turn=turn, request_hash="h"))
    events += [ModelCalled(job=job, trial=key, provider="p", model="m", request_hash=f"h{i}", request_blob="b",
                           response_blob="r", usage=Usage(cost_usd=0.01)) for i in range(3)]
    events += [CandidateChecked(job=job, trial=key, candidate="c1", verdict=verdict(Status.WRONG_OUTPUT)),
               CandidateChecked(job=job, trial=key, candidate="c2", verdict=verdict(Status.CORRECT, 1.5))]
    return [dataclasses.replace(e, ts=ts) for e in events]


def progress_of(total: int, clock: Clock, events: dict[str, list[Event]] | None = None, wall: Clock | None = None,
                out: io.StringIO | None = None) -> tuple[Progress, io.StringIO]:
    out = out or io.StringIO()
    events = events if events is not None else {}
    return Progress(total, "job", out, clock=clock, heartbeat_s=60.0, events_of=lambda key: events.get(key, []),
                    wall=wall or Clock()), out


def finished(op: str, key: str, wall_s: float = 1.0):
    from types import SimpleNamespace

    return SimpleNamespace(key=key, op=op, wall_s=wall_s, status=SimpleNamespace(value="correct"), speedup=None,
                           correct=True, best=None, reason="")


# --- what the line says (fake clock) ------------------------------------------------------

def test_a_quiet_minute_with_trials_running_says_which_run_longest_and_how_far_they_got():
    clock = Clock()
    events = {"k1": agent_events("k1")}
    progress, out = progress_of(3, clock, events)
    progress.began("k1", "aten::softmax")
    clock.now = 10.0
    progress.began("k2", "aten::add")
    clock.now = 70.0
    assert progress.beat()
    lines = out.getvalue().splitlines()[1:]  # after the title
    assert lines[0] == "  [0/3] still running: 2 trial(s), 1 waiting | elapsed 0:01:10"
    softmax, add = lines[1:]
    assert softmax.split()[:2] == ["aten::softmax", "0:01:10"]  # the longest-running first
    assert "session 2, 4 turns, 2 checks (best correct 1.50x), $0.0300" in softmax
    assert add.split() == ["aten::add", "0:01:00"]  # nothing logged yet: no detail
    assert softmax.index("aten::softmax") == len("  [0/3] ")  # under the operators of the trial lines


def test_an_agents_budgets_say_what_its_clock_turns_and_checks_are_out_of():
    clock = Clock()
    events = {"k1": agent_events("k1")}
    out = io.StringIO()
    progress = Progress(1, "job", out, clock=clock, heartbeat_s=60.0, events_of=events.get, wall=Clock(),
                        limits=AgentConfig(wall_s=1800.0, max_turns=60, max_checks=30))
    progress.began("k1", "aten::softmax")
    clock.now = 70.0
    assert progress.beat()
    assert out.getvalue().splitlines()[-1].split(None, 1)[1] == (
        "0:01:10 of 0:30:00  session 2, 4 of 60 turns, 2 of 30 checks (best correct 1.50x), $0.0300")


def test_a_method_without_turns_counts_its_model_calls_and_judged_candidates():
    clock, job = Clock(), "job"
    events = {"k": [
        TrialStarted(job=job, trial="k", op="aten::add", spec_version=1, sample=0),
        *(ModelCalled(job=job, trial="k", provider="p", model="m", request_hash=f"h{i}", request_blob="b",
                      response_blob="r") for i in range(2)),
        CandidateEvaluated(job=job, trial="k", candidate="c1", verdict=verdict(Status.COMPILE_ERROR)),
    ]}
    progress, out = progress_of(1, clock, events)
    progress.began("k", "aten::add")
    clock.now = 61.0
    assert progress.beat()
    assert out.getvalue().splitlines()[-1].endswith("0:01:01  2 model calls, 1 candidate judged (best compile_error)")


def test_a_trial_that_logged_nothing_for_a_while_says_so():
    """An agent waiting on a slow model call, a check stuck: its last event's age tells them apart."""
    clock, wall = Clock(), Clock(1000.0)
    events = {"k": agent_events("k", ts=1000.0)}
    progress, out = progress_of(1, clock, events, wall=wall)
    progress.began("k", "aten::softmax")
    clock.now, wall.now = 200.0, 1190.0
    assert progress.beat()
    assert out.getvalue().rstrip().endswith("$0.0300, nothing logged for 0:03:10 (last: CandidateChecked)")


def test_no_more_than_a_few_trials_are_named():
    clock = Clock()
    progress, out = progress_of(20, clock)
    for i in range(16):
        clock.now = float(i)
        progress.began(f"k{i}", f"aten::op{i}")
    clock.now = 100.0
    assert progress.beat()
    lines = out.getvalue().splitlines()[1:]
    assert lines[0] == "  [ 0/20] still running: 16 trial(s), 4 waiting | elapsed 0:01:40"
    assert [line.split()[0] for line in lines[1:-1]] == ["aten::op0", "aten::op1", "aten::op2"]
    assert lines[-1].strip() == "... and 13 more"


def test_it_is_quiet_while_lines_come_and_when_nothing_runs():
    clock = Clock()
    progress, out = progress_of(3, clock)
    progress.began("k1", "aten::sort")
    progress.began("k2", "aten::add")
    clock.now = 50.0
    progress.finished(finished("aten::add", "k2"))
    clock.now = 100.0  # 50 s since the last line
    assert not progress.beat()
    clock.now = 110.0
    assert progress.beat()  # 60 s: the line, and again only after 60 s more
    clock.now = 169.0
    assert not progress.beat()
    clock.now = 170.0
    assert progress.beat()
    progress.finished(finished("aten::sort", "k1"))
    clock.now = 1000.0  # nothing runs (a job between its trials' end and its summary)
    assert not progress.beat()
    assert "\r" not in out.getvalue()
    assert sum("still running" in line for line in out.getvalue().splitlines()) == 2


def test_a_heartbeat_of_0_s_is_none():
    """progress.heartbeat_s=0: a user who wants only the trials' lines (a log read later)."""
    clock = Clock()
    out = io.StringIO()
    progress = Progress(2, "job", out, clock=clock, heartbeat_s=0)
    progress.began("k1", "aten::sort")
    for now in (61.0, 3600.0):
        clock.now = now
        assert not progress.beat()
    with progress.beating():
        assert not progress_threads()
    assert "still running" not in out.getvalue()


# --- in a job ------------------------------------------------------------------------------

OPS = ["aten::add", "aten::sub"]


def expert_job(root: Path, concurrency: int = 2, heartbeat_s: float = 60.0) -> Config:
    return Config(method=ExpertConfig(concurrency=concurrency), model=ModelConfig(), source=SourceConfig("aten"),
                  chip=ChipConfig(name="cpu", backend="cpu"), eval=EvalConfig(cases="smoke"),
                  tracking=TrackingConfig(root=str(root), mlflow=False), ops=OPS,
                  progress=ProgressConfig(heartbeat_s=heartbeat_s))


class Watched(io.StringIO):
    """stdout, which says when a heartbeat that says `what` was written."""

    def __init__(self, what: str = "still running"):
        super().__init__()
        self.what = what
        self.beat = threading.Event()

    def write(self, s: str) -> int:
        if self.what in s:
            self.beat.set()
        return super().write(s)


def heartbeats(text: str) -> list[str]:
    return [line for line in text.splitlines() if "still running" in line]


def progress_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "kgb-progress"]


def test_a_slow_trial_gets_heartbeat_lines_with_what_it_logged(tmp_path, monkeypatch):
    out = Watched("still running: 1 trial(s)")  # once aten::sub has finished
    monkeypatch.setattr("sys.stdout", out)
    real = kgb.run.run_trial

    def run_trial(method, chip, spec, settings, log, blobs, job, key, *args, **kwargs):
        if spec.id == "aten::add":  # an agent's trial: a session, two turns and a check, then a wait
            log.append(SessionStarted(job=job, trial=key, session=1, driver="loop", protocol="p", prompt_blob="b"))
            for turn in (1, 2):
                log.append(TurnTaken(job=job, trial=key, session=1, turn=turn, request_hash="h"))
            log.append(CandidateChecked(job=job, trial=key, candidate="c1", verdict=verdict(Status.CORRECT)))
            out.beat.wait(30)
        return real(method, chip, spec, settings, log, blobs, job, key, *args, **kwargs)

    monkeypatch.setattr(kgb.run, "run_trial", run_trial)
    assert run_job(expert_job(tmp_path, heartbeat_s=0.2)).correct == 2
    text = out.getvalue()
    assert out.beat.is_set(), text
    beat = text.splitlines().index(next(line for line in heartbeats(text) if out.what in line))
    header, trial = text.splitlines()[beat:beat + 2]
    assert header.startswith("  [1/2] still running: 1 trial(s) | elapsed 0:00:0")  # aten::sub finished
    assert trial.split()[0] == "aten::add" and trial.endswith("2 turns, 1 check (best correct)")
    assert "\r" not in text  # stdout is no terminal here: lines, never an animation
    assert not heartbeats(text.split("correct 2/2")[1])  # none after the trials: the summary ends the job
    assert not progress_threads()


def test_a_fast_job_prints_no_heartbeat_and_leaves_no_thread(tmp_path, monkeypatch):
    out = Watched()
    monkeypatch.setattr("sys.stdout", out)
    assert run_job(expert_job(tmp_path)).correct == 2
    assert not heartbeats(out.getvalue())
    assert not progress_threads()


def test_a_job_with_no_heartbeat_prints_none_however_long_its_trials_run(tmp_path, monkeypatch):
    out = Watched()
    monkeypatch.setattr("sys.stdout", out)
    threads: list[list[threading.Thread]] = []
    real = kgb.run.run_trial

    def run_trial(*args, **kwargs):
        threads.append(progress_threads())
        threading.Event().wait(0.5)  # some 25 intervals of the job's tests above
        return real(*args, **kwargs)

    monkeypatch.setattr(kgb.run, "run_trial", run_trial)
    assert run_job(expert_job(tmp_path, heartbeat_s=0)).correct == 2
    assert not heartbeats(out.getvalue())
    assert threads == [[], []]  # no thread that would print one


@pytest.mark.slow
@pytest.mark.parametrize(("value", "ok"), [("300", True), ("0", True), ("-1", False)])
def test_the_interval_is_a_setting_of_the_command_line(tmp_path, value, ok):
    """`python run.py progress.heartbeat_s=300` for a sweep of half-hour agent trials; a
    negative one ends in one line, before anything is written."""
    from test_errors import refused, run_py

    setting = f"progress.heartbeat_s={value}"
    if not ok:
        line = refused(tmp_path, setting)
        assert line.startswith("error: progress.heartbeat_s=-1.0: ") and "give 0 or more" in line
        return
    done = run_py(tmp_path, "chip=cpu", "ops=[aten::add]", setting, f"tracking.root={tmp_path / 'out'}",
                  "tracking.mlflow=false")
    assert done.returncode == 0, done.stderr
    log = next((tmp_path / "out").glob("jobs/*/events.jsonl"))
    [started] = [line for line in log.read_text().splitlines() if '"RunStarted"' in line]
    assert f'"heartbeat_s": {float(value)}' in started  # recorded with the job's config


def test_ctrl_c_stops_the_heartbeat_with_the_job(tmp_path, monkeypatch):
    """The trials Ctrl-C leaves running go on until run.py exits; the heartbeat does not."""
    out = Watched()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr(kgb.run, "longest_first", lambda ops, device: list(ops))
    release = threading.Event()
    real = kgb.run.run_trial

    def run_trial(method, chip, spec, settings, *args, **kwargs):
        if spec.id == OPS[0]:  # Ctrl-C once the heartbeat names the other, still running
            assert out.beat.wait(30)
            raise KeyboardInterrupt
        release.wait(30)
        return real(method, chip, spec, settings, *args, **kwargs)

    monkeypatch.setattr(kgb.run, "run_trial", run_trial)
    try:
        with pytest.raises(Interrupted):
            run_job(expert_job(tmp_path, heartbeat_s=0.1))
        assert not progress_threads()
        said = len(heartbeats(out.getvalue()))
        threading.Event().wait(0.5)  # five intervals with the other trial still running
        assert len(heartbeats(out.getvalue())) == said
    finally:
        release.set()
    for thread in threading.enumerate():  # the trial left running ends (run.py would exit)
        if thread.name.startswith("ThreadPoolExecutor"):
            thread.join(60)


def test_an_agent_trial_waiting_on_its_model_says_what_it_did_so_far(tmp_path, monkeypatch):
    """method=coding_agent with the loop driver and a scripted model, whose third reply is
    slow: the heartbeat reads the turns, the check and the cost from the job's log."""
    from agent_script import ADD, check, done, scripted, write
    from fake_llm_server import FakeLLMServer
    from test_agents import SECRET, job, model

    monkeypatch.setenv("KGB_TEST_KEY", SECRET)
    out = Watched("1 of 30 checks")
    monkeypatch.setattr("sys.stdout", out)

    def slow(call):
        out.beat.wait(30)
        return done()

    script = {"agent": [write(ADD, input=200, output=900), check(input=240, output=10), slow]}
    with FakeLLMServer(scripted(script), api_key=SECRET) as server:
        cfg = dataclasses.replace(job(CodingAgentConfig(), model(server, "anthropic"), tmp_path),
                                  progress=ProgressConfig(heartbeat_s=0.2))
        assert run_job(cfg).correct == 1
    assert out.beat.is_set(), out.getvalue()
    header, trial = next(block for block in out.getvalue().split("\n  [") if out.what in block).splitlines()[:2]
    assert header.startswith("0/1] still running: 1 trial(s) | elapsed 0:00:")
    name, took, of, limit, detail = trial.split(None, 4)
    assert (name, of, limit) == ("aten::add", "of", "0:30:00")
    assert detail == "2 of 60 turns, 1 of 30 checks (best correct), $0.0095"  # 440 tokens in at $1 per million, 910 out at $10
