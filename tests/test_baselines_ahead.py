"""Baselines timed ahead of their trials, in the GPU's idle time (kgb.baseline_scout,
kgb.evaluate.baselines_ahead, kgb.evaluate.baseline_judge).

No GPU here: the judge's own timing code runs on the CPU (`cpu_as_gpu`), with real timing-lock
files, so that "idle" means what it means on a GPU host: no turn asked for or held, no work
section running, in any process's view of the files."""

from __future__ import annotations

import contextlib
import fcntl
import json
import threading
import time
from pathlib import Path

import pytest
from test_timed_case import SPEC  # x copied into out: a smoke case, and a bench case named big

from kgb import operators
from kgb.baseline_scout import BaselineScout
from kgb.evaluate import (
    EvalSettings,
    baseline_judge,
    baselines_ahead,
    bench_case,
    judge,
    memory_ledger,
    timing_lock,
)
from kgb.evaluate.baselines_ahead import Ahead, Measured
from kgb.evaluate.phases import Phases
from kgb.evaluate.timing_lock import ASKED_SUFFIX, WORK_SUFFIX, TimingLock
from kgb.evaluate.verdict import Turn
from kgb.tracking.baselines import BaselineBook, load_book
from kgb.tracking.events import BaselineMeasured
from kgb.tracking.log import EventLog


def _spec_file(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / "ops" / "aten" / name
    folder.mkdir(parents=True)
    (folder / "spec.py").write_text(SPEC)
    return folder / "spec.py"


@pytest.fixture
def spec_path(tmp_path) -> Path:
    return _spec_file(tmp_path, "copied")


@pytest.fixture
def timed_on_cpu(cpu_as_gpu, monkeypatch):
    monkeypatch.setattr(bench_case.kernel_clock, "session", contextlib.nullcontext)
    monkeypatch.setattr(timing_lock, "spin_up", lambda seconds=0.2: None)  # no GPU to spin up


def _request(tmp_path: Path, *operators: dict) -> dict:
    return {"task": baselines_ahead.TASK, "operators": list(operators), "workspace": str(tmp_path / "w" / "candidate"),
            "timing_lock": str(tmp_path / "timing.lock"), "device": "cpu", "case_tags": ["smoke", "bench"],
            "time_tags": ["bench"], "repeats": 5, "warmup": 1, "result": str(tmp_path / "result.jsonl")}


def _operator(spec_path: Path, **known: float) -> dict:
    return {"spec": str(spec_path), "baselines": known, "gpu_mib": None}


def test_the_judge_times_the_cases_not_given_and_says_how_each_turn_went(tmp_path, spec_path, timed_on_cpu):
    emitted: list[dict] = []
    given = _spec_file(tmp_path, "copied_again")
    request = _request(tmp_path, _operator(given, big=3.0), _operator(spec_path))
    assert baseline_judge.time_baselines(request, emitted.append)["stopped"] == ""
    (case,) = emitted  # the first operator's one bench case was given
    assert (case["op"], case["name"], case["baseline"]) == ("aten::copied", "big", "torch")
    assert case["baseline_us"] > 0 and case["turn"] == Turn.ALONE and case["mode"].startswith("eager")


def test_the_judge_stops_before_a_turn_while_another_judge_keeps_the_gpu_busy(tmp_path, spec_path, timed_on_cpu,
                                                                               monkeypatch):
    monkeypatch.setattr(baseline_judge, "IDLE_WAIT_S", 0.2)
    lock = str(tmp_path / "timing.lock")
    TimingLock(lock, Phases())._create()
    emitted: list[dict] = []
    with open(lock + WORK_SUFFIX, "a") as section:  # another judge's work section, running throughout
        fcntl.flock(section, fcntl.LOCK_SH)
        final = baseline_judge.time_baselines(_request(tmp_path, _operator(spec_path)), emitted.append)
    assert emitted == [] and final["stopped"].startswith(baseline_judge.BUSY)


def test_a_request_for_baselines_is_served_with_no_candidate_process(tmp_path, spec_path, timed_on_cpu, monkeypatch):
    """kgb.evaluate.judge hands the task to the baseline judge, its scratch kept out of the
    workspace as for any judgement; its result file is what the harness reads back."""
    kept_out: list[Path] = []
    monkeypatch.setattr(judge, "_keep_out_of_the_workspace", kept_out.append)
    monkeypatch.setattr(judge, "start_candidate", lambda *a, **k: pytest.fail("a candidate process was started"))
    request = _request(tmp_path, _operator(spec_path), _operator(_spec_file(tmp_path, "copied_again")))
    (tmp_path / "request.json").write_text(json.dumps(request))
    judge.serve_request(tmp_path / "request.json")
    assert kept_out == [tmp_path / "w" / "judge"]
    ahead = baselines_ahead._read(Path(request["result"]), "ok", "")
    assert ahead.stopped == ""
    assert [(m.op, m.case, m.baseline) for m in ahead.measured] == [
        ("aten::copied", "big", "torch"), ("aten::copied_again", "big", "torch")]
    assert all(m.latency_us > 0 for m in ahead.measured)


def test_what_a_judge_measured_before_it_died_is_kept_with_why_it_ended(tmp_path):
    result = tmp_path / "result.jsonl"
    result.write_text(json.dumps({"case": {"op": "cublas::x", "name": "big", "baseline_us": 7.5, "mode": "graph",
                                           "turn": "alone", "missing": "", "baseline": "libcublas"}}) + "\n"
                      + '{"case": {"na')
    ahead = baselines_ahead._read(result, "died:killed by signal SIGSEGV", "a\nSegmentation fault")
    assert ahead == Ahead((Measured("cublas::x", "big", "libcublas", 7.5, "graph", Turn.ALONE),),
                          "the judge ended: died:killed by signal SIGSEGV (Segmentation fault)")


def test_idle_means_no_turn_asked_for_or_held_and_no_section_running(tmp_path):
    lock = TimingLock(str(tmp_path / "timing.lock"), Phases())
    assert lock.idle_within(0.0)
    for suffix in (ASKED_SUFFIX, WORK_SUFFIX):
        with open(lock.path + suffix, "a") as held:
            fcntl.flock(held, fcntl.LOCK_SH)
            began = time.monotonic()
            assert not lock.idle_within(0.1)
            assert time.monotonic() - began >= 0.1
            threading.Timer(0.1, fcntl.flock, (held, fcntl.LOCK_UN)).start()  # the section ends meanwhile
            assert lock.idle_within(5.0)
    assert TimingLock(None, Phases()).idle_within(0.0)  # the CPU: no GPU to share


def test_a_reservation_made_only_where_there_is_room_at_once_never_waits_in_line(tmp_path, monkeypatch):
    path = tmp_path / "gpu.memory"
    mine = memory_ledger.Ledger(path, 100)
    with mine.reserved(60, at_once=True) as held:
        assert held and json.loads(path.read_text())[mine.key]["held"]
    assert mine.key not in json.loads(path.read_text())
    monkeypatch.setattr(memory_ledger, "_alive", lambda key: True)  # the other judges' entries below
    with mine._book() as book:
        book["1:other"] = {"mib": 70, "asked": time.time(), "held": True}
    with mine.reserved(60, at_once=True) as held:
        assert not held
    assert mine.key not in json.loads(path.read_text())  # nothing left behind to hold others up
    with mine.reserved(20, at_once=True) as held:
        assert held
    with mine._book() as book:  # a reservation waiting for room, asked for before
        book["2:waiting"] = {"mib": 50, "asked": time.time() - 1, "held": False}
    with mine.reserved(20, at_once=True) as held:
        assert not held


SETTINGS = EvalSettings(device="cuda", case_tags=("smoke", "bench"), time_cases=("bench",))


def _specs(*ops: str) -> list[operators.Spec]:
    return [operators.load(op) for op in ops]


def _bench(spec: operators.Spec) -> list[str]:
    return [c.name for c in spec.cases if c.tag == "bench"]


class Engine:
    """measure_ahead's stand-in: every case asked for measured at 10 us, and a request with
    `stops_at` among its operators ends the scout after that one."""

    def __init__(self, stops_at: str = "", turn: Turn = Turn.ALONE):
        self.asked: list[tuple[str, dict]] = []
        self.requests = 0
        self.stops_at, self.turn = stops_at, turn

    def __call__(self, specs, settings, known, abort=None):
        self.requests += 1
        measured = []
        for spec in specs:
            self.asked.append((spec.id, dict(known[spec.id])))
            measured += [Measured(spec.id, c, "torch", 10.0, "eager", self.turn) for c in _bench(spec)
                         if c not in known[spec.id]]
            if spec.id == self.stops_at:
                return Ahead(tuple(measured), baseline_judge.BUSY)
        return Ahead(tuple(measured), "")


def _scout(tmp_path, monkeypatch, engine: Engine, coming, begun=(), book=None, run_ended=None):
    monkeypatch.setattr("kgb.baseline_scout.measure_ahead", engine)
    log = EventLog(tmp_path / "jobs" / "j" / "events.jsonl")
    book = book or BaselineBook("fp")
    scout = BaselineScout(coming, SETTINGS, book, log, "j", set(begun).__contains__, threading.Lock(),
                          run_ended or threading.Event())
    scout.start()._thread.join(30)  # to its own end: `stop` is the job's, which kills a judge under way
    return scout.stop(), log, book


def test_the_scout_logs_the_coming_operators_baselines_as_job_events_that_later_trials_are_given(
        tmp_path, monkeypatch):
    softmax, cos, add = _specs("aten::softmax", "aten::cos", "aten::add")
    engine = Engine()
    done, log, book = _scout(tmp_path, monkeypatch, engine, [softmax, cos, add], begun={"aten::cos"})
    assert [op for op, _ in engine.asked] == ["aten::softmax", "aten::add"]  # cos's trial had begun
    events = [e for e in log.events() if isinstance(e, BaselineMeasured)]
    assert all(e.trial is None and e.fingerprint == "fp" and e.turn is Turn.ALONE for e in events)
    assert [(e.op, e.case) for e in events] == [("aten::softmax", c) for c in _bench(softmax)] + [
        ("aten::add", c) for c in _bench(add)]
    assert book.known(softmax) == dict.fromkeys(_bench(softmax), 10.0) and book.known(cos) == {}
    assert done.operators == 2 and done.taken == len(events) and engine.requests == 1  # one judge for both
    assert done.stopped == "every coming operator's baselines were known"
    # a later job reads them back from the log, as a trial's
    assert load_book(tmp_path, "fp").known(add) == dict.fromkeys(_bench(add), 10.0)


def test_the_scout_asks_each_judge_for_a_few_operators(tmp_path, monkeypatch):
    monkeypatch.setattr("kgb.baseline_scout.PER_JUDGE", 2)
    engine = Engine()
    done, _, _ = _scout(tmp_path, monkeypatch, engine, _specs("aten::softmax", "aten::cos", "aten::add"))
    assert engine.requests == 2 and [op for op, _ in engine.asked] == ["aten::softmax", "aten::cos", "aten::add"]


def test_the_scout_stops_where_the_judge_found_the_gpu_busy(tmp_path, monkeypatch):
    softmax, cos, add = _specs("aten::softmax", "aten::cos", "aten::add")
    engine = Engine(stops_at="aten::cos")
    done, _, book = _scout(tmp_path, monkeypatch, engine, [softmax, cos, add])
    assert [op for op, _ in engine.asked] == ["aten::softmax", "aten::cos"]
    assert done.stopped == baseline_judge.BUSY and book.known(add) == {}


def test_the_scout_asks_only_for_what_the_book_lacks_and_a_crowded_turn_is_never_given_out(tmp_path, monkeypatch):
    softmax, cos = _specs("aten::softmax", "aten::cos")
    book = BaselineBook("fp")
    first, *rest = _bench(softmax)
    book._known[(softmax.id, softmax.version, first)] = book_figure = type(
        "B", (), {"latency_us": 3.0, "name": "torch", "ref": "earlier#1"})()
    book._known.update({(cos.id, cos.version, c): book_figure for c in _bench(cos)})  # all known: not asked
    engine = Engine(turn=Turn.CROWDED)
    done, log, book = _scout(tmp_path, monkeypatch, engine, [softmax, cos], book=book)
    assert engine.asked == [(softmax.id, {first: 3.0})]
    assert len([e for e in log.events() if isinstance(e, BaselineMeasured)]) == len(rest)  # logged, crowded
    assert book.known(softmax) == {first: 3.0} and done.taken == 0


def test_nothing_is_logged_once_the_run_has_ended(tmp_path, monkeypatch):
    ended = threading.Event()
    ended.set()
    done, log, _ = _scout(tmp_path, monkeypatch, Engine(), _specs("aten::softmax"), run_ended=ended)
    assert not any(isinstance(e, BaselineMeasured) for e in log.events()) and done.operators == 0


def test_the_jobs_end_kills_the_judge_under_way_and_keeps_what_it_measured(tmp_path, monkeypatch):
    softmax, cos = _specs("aten::softmax", "aten::cos")
    asked = threading.Event()

    def measuring(specs, settings, known, abort=None):
        asked.set()
        assert abort is not None and abort.wait(30)  # killed by the job's end
        return Ahead((Measured(specs[0].id, _bench(specs[0])[0], "torch", 10.0, "eager", Turn.ALONE),),
                     "the judge ended: aborted")

    monkeypatch.setattr("kgb.baseline_scout.measure_ahead", measuring)
    log = EventLog(tmp_path / "events.jsonl")
    scout = BaselineScout([softmax, cos], SETTINGS, BaselineBook("fp"), log, "j", lambda op: False, threading.Lock(),
                          threading.Event()).start()
    assert asked.wait(30)
    done = scout.stop()
    assert done.operators == 1 and done.taken == 1 and done.stopped == "the job's trials ended"
    assert [e.case for e in log.events() if isinstance(e, BaselineMeasured)] == [_bench(softmax)[0]]


def test_the_warm_engine_forks_a_judge_that_serves_the_request(spec_path):
    """The whole way, in real processes: the request, the engine's fork, the judge's dispatch
    and the answer read back. Where CUDA is absent the judge's timing has no events to read, so
    each case's baseline is missing (a trial's judge would time it); on a GPU the same request
    times them (docs/gpu-results.md, session 70)."""
    spec = operators.load_spec(spec_path)
    settings = EvalSettings(device="cpu", case_tags=("smoke", "bench"), time_cases=("bench",))
    ahead = baselines_ahead.measure_ahead([spec], settings, {})
    assert ahead.stopped == ""
    assert {(m.op, m.case) for m in ahead.measured} <= {("aten::copied", "big")}


def test_a_timed_job_gives_its_later_trials_the_baselines_its_scout_timed_while_the_first_ran(
        tmp_path, monkeypatch, capsys):
    """kgb.run's wiring: the trials that begin at once are left to their judges, the scout asks
    for the others', and those trials are given what it logged. The judges are stand-ins: the
    first trial's returns only once the scout has asked for every coming operator."""
    import dataclasses

    import kgb.run
    import kgb.trial
    from kgb import config
    from kgb.evaluate import CaseResult, Status, Verdict

    real = kgb.run.eval_settings
    monkeypatch.setattr(kgb.run, "eval_settings", lambda *a: dataclasses.replace(
        real(*a), case_tags=("smoke", "bench"), time_cases=("bench",)))  # a GPU's settings, as far as the book goes
    engine = Engine()
    monkeypatch.setattr("kgb.baseline_scout.measure_ahead", engine)
    given: dict[str, dict] = {}

    def judged(source, spec, settings, baselines=None):
        given[spec.id] = dict(baselines or {})
        if len(given) == 1 and cfg.eval.baselines_ahead:
            deadline = time.monotonic() + 30
            while len(engine.asked) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
        return Verdict(Status.CORRECT, "ok", cases=tuple(
            CaseResult(c, "bench", Status.CORRECT, latency_us=5.0, baseline_us=(baselines or {}).get(c, 20.0),
                       baseline_mode=None if c in (baselines or {}) else "eager", baseline_turn=Turn.ALONE)
            for c in _bench(spec)), baseline="torch", device="cuda")

    monkeypatch.setattr(kgb.trial, "evaluate", judged)
    ops = ["aten::softmax", "aten::cos", "aten::add"]
    cfg = config.Config(method=config.ExpertConfig(concurrency=1), model=config.ModelConfig(),
                        source=config.SourceConfig("aten"), chip=config.ChipConfig(name="cpu", backend="cpu"),
                        eval=config.EvalConfig(cases="smoke"),
                        tracking=config.TrackingConfig(root=str(tmp_path), mlflow=False), ops=ops)
    assert kgb.run.run_job(cfg).correct == 3
    first, *coming = list(given)
    assert sorted(op for op, _ in engine.asked) == sorted(coming)  # never the trial that began at once
    assert given[first] == {}
    for op in coming:
        assert given[op] == dict.fromkeys(_bench(operators.load(op)), 10.0)
    assert "kgb: " in capsys.readouterr().err
    # no scout where it is turned off: every trial times its own
    given.clear()
    engine.asked.clear()
    cfg = dataclasses.replace(cfg, tracking=config.TrackingConfig(root=str(tmp_path / "off"), mlflow=False),
                              eval=config.EvalConfig(cases="smoke", baselines_ahead=False))
    kgb.run.run_job(cfg)
    assert engine.asked == [] and all(known == {} for known in given.values())
