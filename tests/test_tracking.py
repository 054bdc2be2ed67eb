"""The event log: typed round trips, torn lines, schema versions, blobs, projections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgb.evaluate.verdict import CaseResult, Status, Verdict
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    EVENT_TYPES,
    CandidateEvaluated,
    CandidateProposed,
    ModelCalled,
    RunFinished,
    TrialEnd,
    TrialFinished,
    TrialStarted,
    to_json,
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
    assert log.events() == events  # the copy in memory that the job loop folds is the file's


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


def test_unfinished_trial_is_not_counted():
    events = _trial("a", "aten::a", verdict(Status.CORRECT))[:-1]
    outcome = trial_outcomes(events)["a"]
    assert not outcome.finished
    assert summarize([outcome]).trials == 0
