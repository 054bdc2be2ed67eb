"""kgb.evaluate.bench_timing: no baseline is timed while the candidate process lives, and a
baseline says whether its turn had the GPU to itself.

The turns themselves need a GPU; here the judge's runner is a stand-in that records, for
every baseline it times, whether the candidate process was closed by then, or the judge's
own turn methods run the real timing code on the CPU (the `cpu_as_gpu` fixture)."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest
import torch

from kgb import operators
from kgb.evaluate import bench_case, bench_timing
from kgb.evaluate.baseline import BaselineTiming
from kgb.evaluate.bench_case import TURN_BATCH_BYTES, TimedCase
from kgb.evaluate.case_runner import CaseRunner
from kgb.evaluate.phases import Phases
from kgb.evaluate.staged_replay import StagedReplay
from kgb.evaluate.timing_lock import TimingLock
from kgb.evaluate.verdict import CROWDED_TURN, CaseResult, InstrumentFailed, Status, TimedBy, Turn
from kgb.operators import Case


class Candidate:
    def __init__(self):
        self.closed = False

    def close(self):
        self.closed = True


class Baseline:
    turn = Turn.ALONE

    def __init__(self, candidate: Candidate, us: float, broke: str = ""):
        self.candidate, self._us, self.broke, self.missing = candidate, us, broke, ""
        self.prepared = False
        self.timed_beside_candidate: bool | None = None

    def prepare(self):
        self.prepared = True

    def __call__(self):
        assert self.prepared, "timed before its warm-up"
        self.timed_beside_candidate = not self.candidate.closed

    @property
    def us(self):
        return self._us if self.timed_beside_candidate is not None else None

    @property
    def mode(self):
        return "eager" if self.us is not None else None


@dataclasses.dataclass
class Staged:
    case: Case
    nbytes: int
    baseline: Baseline | None


class Runner:
    """What time_bench_cases asks of kgb.evaluate.case_runner.CaseRunner."""

    def __init__(self, candidate: Candidate, sizes: dict[str, int], known: set[str] = frozenset(), broke: str = ""):
        self.candidate, self.sizes, self.known, self.broke = candidate, sizes, known, broke
        self.device, self.spec = "cpu", None
        self.turns: list[tuple[bool, list[str], list[str]]] = []  # (candidate alive, replays, baselines)
        self.baselines: list[Baseline] = []
        self.exclusive = type("Lock", (), {"work": staticmethod(contextlib.nullcontext), "tag": "op"})()
        self.quiet_gate = None  # the GPU's quiet gate (kgb.evaluate.quiet_gate): none on the CPU

    def phase(self, _name):
        return contextlib.nullcontext()

    def released(self):
        pass

    def _baseline(self, case):
        b = Baseline(self.candidate, 100.0 + len(self.baselines), self.broke if case.name == "c" else "")
        self.baselines.append(b)
        return b

    @property
    def known_baselines(self):
        return dict.fromkeys(self.known, 50.0)

    def stage(self, case, repeats, warmup, then=None):
        assert not self.candidate.closed, "the candidate process is needed to stage a case"
        if then is not None:  # its last call has replied
            then()
        self.staged_more(case)
        return Staged(case, self.sizes[case.name], None if case.name in self.known else self._baseline(case))

    def staged_more(self, case):
        """The rest of staging a case, after its call (the replay's staging)."""

    def baseline_on(self, case, timed, repeats, warmup):
        assert timed["x"].numel() == 4  # set T, drawn again
        return self._baseline(case)

    def prepare_baselines(self, baselines):
        for b in baselines:
            if b is not None:
                b.prepare()

    def measure(self, staged):
        self.turns.append((not self.candidate.closed, [s.case.name for s in staged],
                           [s.case.name for s in staged if s.baseline is not None]))
        for s in staged:
            if s.baseline is not None:
                s.baseline()

    def measure_baselines(self, baselines):
        self.turns.append((not self.candidate.closed, [], [c.name for c, _ in baselines]))
        for case, b in baselines:
            b()
            if b.broke:
                raise InstrumentFailed(f"case {case.name}: {b.broke}")

    def finish(self, s):
        return bench_case.Finished(10.0, s.baseline.us if s.baseline is not None else None, "graph", 0.01,
                                   TimedBy.JUDGE, 0.5, 0.25)


def _judge(sizes, known=frozenset(), broke="", checked=()):
    """Time bench cases named by their sizes; `checked`: those checked before (a spec of bench
    cases alone), whose results exist already."""
    cases = [Case(name=n, tag="bench", seed=i) for i, n in enumerate(sizes)]
    candidate = Candidate()
    runner = Runner(candidate, sizes, known, broke)
    results = [CaseResult(name=c.name, tag="bench", status=Status.CORRECT) for c in cases if c.name in checked]
    message = bench_timing.time_bench_cases(runner, candidate, cases, 100, 10, results)
    return runner, candidate, results, message


@pytest.fixture(autouse=True)
def _small_draws(monkeypatch):
    monkeypatch.setattr(bench_timing, "draw_inputs", lambda spec, case, seed, device: {"x": torch.zeros(4)})


def test_one_turn_times_replays_and_baselines_once_the_candidate_process_is_gone():
    runner, candidate, results, message = _judge({"a": 1, "b": 1, "c": 1})
    assert message == "" and candidate.closed
    assert runner.turns == [(False, ["a", "b", "c"], ["a", "b", "c"])]  # one turn, as before
    assert all(b.timed_beside_candidate is False for b in runner.baselines)
    assert [r.baseline_us for r in results] == [100.0, 101.0, 102.0]
    assert all(r.latency_us == 10.0 and r.baseline_mode == "eager" for r in results)


def test_each_timed_case_gets_one_result_judged_by_its_timing():
    """Judge v33: a timed case has no check before its timing; its result, correct, comes from
    the timing's checks, with the candidate's errors on set V. A spec of bench cases alone has
    them checked first, as its only cases: their results are completed, not doubled."""
    _, _, results, _ = _judge({"a": 1, "b": TURN_BATCH_BYTES, "c": 1})
    assert [(r.name, r.status, r.latency_us, r.max_abs_err) for r in results] == [
        ("a", Status.CORRECT, 10.0, 0.5), ("b", Status.CORRECT, 10.0, 0.5), ("c", Status.CORRECT, 10.0, 0.5)]
    assert all(r.baseline_us is not None for r in results)  # a's and b's timed alone, later
    _, _, results, _ = _judge({"a": 1, "b": 1}, checked={"a", "b"})
    assert [(r.name, r.latency_us) for r in results] == [("a", 10.0), ("b", 10.0)]


def test_an_earlier_turns_baselines_wait_for_a_turn_after_the_candidate_process():
    runner, candidate, results, message = _judge({"a": TURN_BATCH_BYTES, "b": 1, "c": 1})
    assert message == ""
    assert runner.turns == [(True, ["a"], []),  # the candidate process lives: a's replay only
                            (False, ["b", "c"], ["b", "c"]),
                            (False, [], ["a"])]  # a's baseline on set T drawn again
    timed = [b for b in runner.baselines if b.timed_beside_candidate is not None]
    assert len(timed) == 3 and not any(b.timed_beside_candidate for b in timed)
    assert all(r.baseline_us is not None and r.latency_us == 10.0 for r in results)
    assert [r.baseline_turn for r in results] == [Turn.ALONE] * 3  # the turns said so, the later one too


def test_known_baselines_leave_the_candidate_process_alone():
    runner, candidate, results, message = _judge({"a": TURN_BATCH_BYTES, "b": 1}, known={"a", "b"})
    assert message == "" and not candidate.closed  # closed with the judgement, unwaited
    assert runner.turns == [(True, ["a"], []), (True, ["b"], [])]
    assert [r.baseline_turn for r in results] == [None, None]  # given, not timed here


def test_a_baseline_that_breaks_in_its_own_turn_leaves_the_rest_untimed_and_says_so():
    runner, candidate, results, message = _judge({"c": TURN_BATCH_BYTES, "a": 1}, broke="the routine raised")
    assert message == "; baselines not timed from case c: the routine raised"
    assert [r.latency_us for r in results] == [10.0, 10.0]  # the replays were timed


def test_what_the_bench_turns_ask_of_the_runner_and_the_process_the_real_ones_have():
    """The stand-ins above could answer what the judge's own CaseRunner and CandidateProcess
    do not: two methods lost in a move went unnoticed by the tests above (session 39), where
    every GPU judgement with a baseline to time would have failed."""
    import inspect
    import re

    from kgb import operators
    from kgb.evaluate.candidate_process import CandidateProcess
    from kgb.evaluate.case_runner import CaseRunner

    source = inspect.getsource(bench_timing)
    real = CaseRunner(operators.load("aten::add"), None, "cuda")
    for obj, fake, cls, asked in ((real, Runner, CaseRunner, set(re.findall(r"runner\.(\w+)", source))),
                                  (CandidateProcess, Candidate, CandidateProcess,
                                   set(re.findall(r"candidate\.(\w+)", source)))):
        assert asked, "the module's names for them changed: this test reads them"
        assert [n for n in sorted(asked) if not hasattr(obj, n)] == []
        for name in asked:
            theirs, ours = getattr(cls, name, None), getattr(fake, name, None)
            if inspect.isfunction(theirs) and inspect.isfunction(ours):
                wanted = [p for p in inspect.signature(theirs).parameters.values() if p.default is p.empty]
                assert [p.name for p in wanted] == list(inspect.signature(ours).parameters)[:len(wanted)], name


class _DrainRanOut(TimingLock):
    """The timing lock of a GPU where every turn waited DRAIN_LIMIT_S for a work section that
    ran on (a candidate hanging in its check), then timed beside it."""

    def __call__(self):
        self.crowded_turns += 1
        return contextlib.nullcontext()


@pytest.mark.parametrize("lock", [TimingLock, _DrainRanOut])
def test_a_baseline_says_whether_its_turn_had_the_gpu_to_itself(cpu_as_gpu, monkeypatch, lock):
    """What keeps a slow baseline, timed beside another evaluation's work, out of the book that
    gives it to every later trial (kgb.tracking.baselines)."""
    monkeypatch.setattr(bench_case.kernel_clock, "session", contextlib.nullcontext)
    runner = CaseRunner(operators.load("aten::add"), None, "cpu")
    runner.exclusive = lock(None, runner.phase)
    x = torch.randn(1024)
    alone_in_turn, with_replay = (BaselineTiming(lambda: x + 1, 20, 2, Phases()) for _ in range(2))
    runner.prepare_baselines([alone_in_turn, with_replay])
    runner.measure_baselines([(Case(name="a", tag="bench", seed=0), alone_in_turn)])
    staged = TimedCase(Case(name="b", tag="bench", seed=1), None, {}, with_replay)  # no replay staged
    runner.measure([staged])
    want = Turn.CROWDED if lock is _DrainRanOut else Turn.ALONE
    assert alone_in_turn.turn is with_replay.turn is staged.turn is want
    for b in (alone_in_turn, with_replay):
        assert b.us > 0 and b.mode.endswith(CROWDED_TURN) is (want is Turn.CROWDED)


class _ReplayThatRan(StagedReplay):
    """A staged replay whose timing ran (its kernels in the judge's CUDA context), with nothing
    behind it."""

    def __init__(self):
        self.measured = False

    def measure(self):
        self.measured = True


def test_a_baseline_that_breaks_after_a_replay_in_its_turn_is_the_candidates_runtime_error(cpu_as_gpu, monkeypatch):
    """CUDA reports a kernel's fault at a later call of its context: the baseline timed after a
    replay is where a replayed kernel's illegal access shows. Until judge v25 that left the
    candidate correct, and the replays of the turn, measured, were never checked."""
    monkeypatch.setattr(bench_case.kernel_clock, "session", contextlib.nullcontext)

    def faults():
        raise torch.AcceleratorError("CUDA error: an illegal memory access was encountered")

    runner = CaseRunner(operators.load("aten::add"), None, "cpu")
    runner.exclusive = TimingLock(None, runner.phase)
    replay, baseline = _ReplayThatRan(), BaselineTiming(faults, 20, 2, Phases())
    with pytest.raises(bench_case.Failed) as failed:
        runner.measure([TimedCase(Case(name="b", tag="bench", seed=1), None, {}, baseline, replay=replay)])
    assert replay.measured and failed.value.status == Status.RUNTIME_ERROR
    assert failed.value.message.startswith("case b: the speed baseline raised AcceleratorError: CUDA error: an "
                                           "illegal memory access was encountered, after the judge's replay")
    # a baseline that breaks in a turn of baselines alone, every replay checked by then, leaves
    # the candidate correct and the cases from it on without their baseline
    with pytest.raises(InstrumentFailed):
        runner.measure_baselines([(Case(name="c", tag="bench", seed=2), BaselineTiming(faults, 20, 2, Phases()))])


def test_the_candidate_process_ends_beside_the_staging_of_its_last_call():
    """Its end (killed, then reaped) starts once its last call has replied and runs while the
    judge stages that call's replay, where the judge waited for it after staging (0.05-0.11 s a
    judgement on an H100, session 60); the last turn still comes after it is reaped."""
    import threading

    staging = threading.Event()

    class Ending(Candidate):
        def close(self):
            assert staging.wait(5), "the end waited for the staging to finish"
            super().close()

    class Staging(Runner):
        def staged_more(self, case):
            if case.name == "b":
                staging.set()  # the last case's staging runs while the process ends

    cases = [Case(name=n, tag="bench", seed=i) for i, n in enumerate("ab")]
    candidate = Ending()
    runner = Staging(candidate, {"a": 1, "b": 1})
    results = [CaseResult(name=c.name, tag="bench", status=Status.CORRECT) for c in cases]
    assert bench_timing.time_bench_cases(runner, candidate, cases, 100, 10, results) == ""
    assert runner.turns == [(False, ["a", "b"], ["a", "b"])]
    assert all(b.timed_beside_candidate is False for b in runner.baselines)


def test_a_failure_to_end_the_candidate_process_beside_the_judge_still_ends_it_and_fails_the_judgement(monkeypatch):
    """Where the quiet gate cannot be taken for its end, the process is ended without it and
    the judge hears why, rather than timing baselines beside a process that lives on."""

    @contextlib.contextmanager
    def broken(gate):
        raise OSError(5, "the gate's file could not be opened")
        yield

    monkeypatch.setattr(bench_timing.quiet_gate, "changing", broken)
    cases = [Case(name=n, tag="bench", seed=i) for i, n in enumerate("ab")]
    candidate = Candidate()
    runner = Runner(candidate, {"a": 1, "b": 1})
    results = [CaseResult(name=c.name, tag="bench", status=Status.CORRECT) for c in cases]
    with pytest.raises(OSError, match="gate's file"):
        bench_timing.time_bench_cases(runner, candidate, cases, 100, 10, results)
    assert candidate.closed and runner.turns == []  # ended, and no baseline timed
