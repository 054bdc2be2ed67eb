"""Speed baselines measured once per chip and case (kgb.tracking.baselines): the first
evaluation's measurement is logged as an event, later evaluations are given it and name it,
a later job reads it back, and another chip's fingerprint measures its own; a baseline timed
in a crowded turn is never given out, and evaluations that measured the same case at once
end up sharing one figure. No GPU here: the judge is replaced by one that 'measures' a new
figure each time it is asked to."""

from __future__ import annotations

import pytest

import kgb.trial as trial_module
from kgb import operators
from kgb.evaluate import CaseResult, EvalSettings, Status, Verdict
from kgb.evaluate.verdict import Turn
from kgb.tracking.baselines import BaselineBook, fingerprint, load_book
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import BaselineMeasured
from kgb.tracking.log import EventLog
from kgb.trial import TrialContext

SETTINGS = EvalSettings(device="cuda", case_tags=("smoke", "bench"), time_cases=("bench",))


class MeasuringJudge:
    """A judge whose every baseline measurement gives a new figure (11, 12, ...)."""

    def __init__(self):
        self.given: list[dict] = []
        self.measured = 10.0
        self.crowded: set[int] = set()  # the judgements (0, 1, ...) whose turn was crowded

    def __call__(self, source, spec, settings, baselines=None):
        self.given.append(dict(baselines or {}))
        cases = []
        turn = Turn.CROWDED if len(self.given) - 1 in self.crowded else Turn.ALONE
        for name in ("bench-a", "bench-b"):
            mode, timed_in = None, None
            if name in (baselines or {}):
                base = baselines[name]
            else:
                self.measured += 1
                base, mode = self.measured, f"eager (the GPU's count over 3 of {int(self.measured)} calls)"
                timed_in = turn
            cases.append(CaseResult(name, "bench", Status.CORRECT, latency_us=5.0, baseline_us=base, baseline_mode=mode,
                                    baseline_turn=timed_in))
        cases.append(CaseResult("smoke-1", "smoke", Status.CORRECT))
        return Verdict(Status.CORRECT, "ok", cases=tuple(cases), baseline="torch", device="cuda")


@pytest.fixture
def judge(monkeypatch):
    fake = MeasuringJudge()
    monkeypatch.setattr(trial_module, "evaluate", fake)
    return fake


def _context(tmp_path, job: str, book: BaselineBook) -> TrialContext:
    spec = operators.load("aten::softmax")
    return TrialContext(problem=spec.problem(chip_notes="", show_reference=True), spec=spec, settings=SETTINGS,
                        log=EventLog(tmp_path / "jobs" / job / "events.jsonl"), blobs=BlobStore(tmp_path / "blobs"),
                        job=job, key=f"{job}-t", sample=0, baselines=book)


def test_a_case_baseline_is_measured_once_and_every_later_speedup_names_it(tmp_path, judge):
    book = BaselineBook("h200-a")
    ctx = _context(tmp_path, "job1", book)
    first = ctx.evaluate("source one").verdict
    second = ctx.evaluate("source two").verdict
    events = [e for e in ctx.log.events() if isinstance(e, BaselineMeasured)]
    assert [(e.case, e.latency_us, e.fingerprint) for e in events] == [("bench-a", 11.0, "h200-a"), ("bench-b", 12.0, "h200-a")]
    # how each was timed stays with it: a reader can tell a baseline read from a partial count
    assert [e.timing_mode for e in events] == [f"eager (the GPU's count over 3 of {n} calls)" for n in (11, 12)]
    assert judge.given == [{}, {"bench-a": 11.0, "bench-b": 12.0}]  # the second judgement times no baseline
    refs = {c.name: c.baseline_from for c in first.cases}
    assert refs["bench-a"] == f"job1#{events[0].seq}" and refs["smoke-1"] is None
    assert [c.baseline_from for c in second.cases] == [c.baseline_from for c in first.cases]
    assert [c.baseline_us for c in second.cases] == [c.baseline_us for c in first.cases]
    ctx.log.close()


def test_a_later_job_reads_the_baselines_back_and_another_chip_measures_its_own(tmp_path, judge):
    ctx = _context(tmp_path, "job1", BaselineBook("h200-a"))
    ctx.evaluate("source one")
    ctx.log.close()
    same_chip = _context(tmp_path, "job2", load_book(tmp_path, "h200-a"))
    assert same_chip.evaluate("source two").verdict.cases[0].baseline_from.startswith("job1#")
    assert not [e for e in same_chip.log.events() if isinstance(e, BaselineMeasured)]
    other_chip = _context(tmp_path, "job3", load_book(tmp_path, "h100-b"))
    other_chip.evaluate("source three")
    assert [e.case for e in other_chip.log.events() if isinstance(e, BaselineMeasured)] == ["bench-a", "bench-b"]
    assert judge.given[-1] == {}
    same_chip.log.close()
    other_chip.log.close()


def test_the_fingerprint_follows_the_device_the_settings_and_the_libraries():
    base = fingerprint("NVIDIA H200", "cuda repeats=100", {"torch": "2.11.0", "triton": "3.6.0", "mlflow": "3"})
    assert base == fingerprint("NVIDIA H200", "cuda repeats=100", {"torch": "2.11.0", "triton": "3.6.0", "mlflow": "4"})
    assert base != fingerprint("NVIDIA H100", "cuda repeats=100", {"torch": "2.11.0", "triton": "3.6.0"})
    assert base != fingerprint("NVIDIA H200", "cuda repeats=50", {"torch": "2.11.0", "triton": "3.6.0"})
    assert base != fingerprint("NVIDIA H200", "cuda repeats=100", {"torch": "2.12.0", "triton": "3.6.0"})


def test_a_baseline_timed_in_a_crowded_turn_is_its_verdicts_own_and_the_next_evaluation_measures_again(tmp_path, judge):
    judge.crowded = {0}
    ctx = _context(tmp_path, "job1", BaselineBook("h200-a"))
    first = ctx.evaluate("source one").verdict
    second = ctx.evaluate("source two").verdict
    third = ctx.evaluate("source three").verdict
    assert judge.given == [{}, {}, {"bench-a": 13.0, "bench-b": 14.0}]  # the crowded figures were never given
    events = [e for e in ctx.log.events() if isinstance(e, BaselineMeasured)]
    assert [(e.latency_us, e.turn) for e in events] == [(11.0, Turn.CROWDED), (12.0, Turn.CROWDED),
                                                        (13.0, Turn.ALONE), (14.0, Turn.ALONE)]
    # the crowded verdict keeps the figure its speedup was taken against, and names it
    assert [(c.baseline_us, c.baseline_from, c.baseline_turn) for c in first.cases[:2]] == [
        (11.0, f"job1#{events[0].seq}", Turn.CROWDED), (12.0, f"job1#{events[1].seq}", Turn.CROWDED)]
    assert [c.baseline_from for c in third.cases[:2]] == [c.baseline_from for c in second.cases[:2]] == [
        f"job1#{events[2].seq}", f"job1#{events[3].seq}"]
    assert first.speedup == pytest.approx((11 * 12) ** 0.5 / 5) and third.speedup == pytest.approx((13 * 14) ** 0.5 / 5)
    ctx.log.close()
    # read back from the log, the book passes the crowded events over as well
    assert load_book(tmp_path, "h200-a").known(ctx.spec) == {"bench-a": 13.0, "bench-b": 14.0}


def test_evaluations_that_measured_one_case_at_once_share_the_first_figure_logged_and_keep_their_own_in_the_log(
        tmp_path, judge):
    book = BaselineBook("h200-a")
    ctx = _context(tmp_path, "job1", book)
    # two judgements started before either was recorded: neither was given a baseline
    one, two = (judge(f"source {n}", ctx.spec, SETTINGS) for n in (1, 2))
    first = book.record(ctx.emit, "job1", ctx.spec, one)
    second = book.record(ctx.emit, "job1", ctx.spec, two)
    events = [e for e in ctx.log.events() if isinstance(e, BaselineMeasured)]
    assert [e.latency_us for e in events] == [11.0, 12.0, 13.0, 14.0]  # every measurement is a fact of the log
    assert [(c.baseline_us, c.baseline_from) for c in second.cases[:2]] == [
        (c.baseline_us, c.baseline_from) for c in first.cases[:2]] == [(11.0, f"job1#{events[0].seq}"),
                                                                        (12.0, f"job1#{events[1].seq}")]
    assert [c.baseline_mode for c in second.cases[:2]] == [None, None]  # given, as a later judgement's would be
    assert book.known(ctx.spec) == {"bench-a": 11.0, "bench-b": 12.0}
    ctx.log.close()


def test_a_crowded_measurement_takes_the_books_figure_where_another_evaluation_logged_one_first(tmp_path, judge):
    book = BaselineBook("h200-a")
    ctx = _context(tmp_path, "job1", book)
    judge.crowded = {1}
    alone, crowded = (judge(f"source {n}", ctx.spec, SETTINGS) for n in (1, 2))
    book.record(ctx.emit, "job1", ctx.spec, alone)
    second = book.record(ctx.emit, "job1", ctx.spec, crowded)
    assert [c.baseline_us for c in second.cases[:2]] == [11.0, 12.0]
    assert [e.turn for e in ctx.log.events() if isinstance(e, BaselineMeasured)] == [Turn.ALONE] * 2 + [Turn.CROWDED] * 2
    ctx.log.close()
