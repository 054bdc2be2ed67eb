"""Speed baselines measured once per chip and case (kgb.tracking.baselines): the first
evaluation's measurement is logged as an event, later evaluations are given it and name it,
a later job reads it back, and another chip's fingerprint measures its own. No GPU here: the
judge is replaced by one that 'measures' a new figure each time it is asked to."""

from __future__ import annotations

import pytest

import kgb.trial as trial_module
from kgb import operators
from kgb.evaluate import CaseResult, EvalSettings, Status, Verdict
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

    def __call__(self, source, spec, settings, baselines=None):
        self.given.append(dict(baselines or {}))
        cases = []
        for name in ("bench-a", "bench-b"):
            mode = None
            if name in (baselines or {}):
                base = baselines[name]
            else:
                self.measured += 1
                base, mode = self.measured, f"eager (the GPU's count over 3 of {int(self.measured)} calls)"
            cases.append(CaseResult(name, "bench", Status.CORRECT, latency_us=5.0, baseline_us=base, baseline_mode=mode))
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
