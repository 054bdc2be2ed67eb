"""A trial's TrialFinished.wall_s counts every attempt it ran (kgb.trial.attempts_s): a trial
resumed after a Ctrl-C reported only its last attempt's seconds, 0.0 for one judged 3.5 s in
its first (session 49's user walk), and an agent's trial resumed so read as nearly free."""

from __future__ import annotations

from kgb.tracking.events import TrialStarted, TurnTaken
from kgb.trial import attempts_s


def _turn(ts: float) -> TurnTaken:
    return TurnTaken(job="j", session=1, turn=1, request_hash="h", tool_calls=0, ts=ts)


def _started(ts: float, attempt: int) -> TrialStarted:
    return TrialStarted(job="j", trial="t", op="aten::add", spec_version=1, sample=0, attempt=attempt, ts=ts)


def test_each_earlier_attempt_counts_from_its_start_to_its_last_event():
    prior = [_started(100.0, 1), _turn(101.0), _turn(103.5),  # cut short by Ctrl-C after 3.5 s
             _started(200.0, 2), _turn(210.0)]  # cut short again after 10 s
    assert attempts_s(prior) == 13.5


def test_a_first_attempt_has_nothing_before_it_and_an_attempt_that_logged_nothing_counts_nothing():
    assert attempts_s([]) == 0.0
    assert attempts_s([_started(100.0, 1)]) == 0.0
