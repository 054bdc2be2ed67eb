"""The progress line's estimate (kgb.progress), on a fake clock and a made-up table of
expected seconds: no timed test."""

from __future__ import annotations

import io
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from kgb.progress import Progress


@dataclass
class Clock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


def trial(op: str, wall_s: float) -> SimpleNamespace:
    """What a progress line reads of a finished, correct trial."""
    return SimpleNamespace(key=op, op=op, wall_s=wall_s, status=SimpleNamespace(value="correct"), speedup=None,
                           correct=True, best=None, reason="")


def eta_of(out: io.StringIO) -> str:
    return out.getvalue().splitlines()[-1].split("eta ")[1].split()[0]


# longest first, as kgb.trial_order starts them: one long operator, then many short ones
EXPECTED = {"aten::sort": 10.0, **{f"aten::op{i}": 1.0 for i in range(20)}}
TODO = ["aten::sort", *(f"aten::op{i}" for i in range(20))]


def test_the_estimate_is_the_expected_seconds_of_the_trials_left_at_this_runs_pace():
    """The longest trial first, done in 20 s where the table expects 10: this run is twice as
    slow, so the 20 short ones left (1 s each expected) take 2 s each, 2 at a time: 20 s. The
    mean of the trials finished (20 s each) said 400 s (a 210-operator CPU job's first line
    said `eta 0:22:05`; it took 1:42)."""
    clock, out = Clock(), io.StringIO()
    progress = Progress(len(TODO), "job", out, todo=TODO, expected=EXPECTED, width=2, clock=clock)
    clock.now = 20.0
    progress.finished(trial("aten::sort", 20.0))
    assert eta_of(out) == "0:00:20"
    clock.now = 21.0  # two short ones at 1 s each, as fast as the table says: 18 left at 1 s, 2 at once
    progress.finished(trial("aten::op0", 1.0))
    progress.finished(trial("aten::op1", 1.0))
    assert progress.eta(21.0) == pytest.approx(18 * 1.0 * (22.0 / 12.0) / 2)  # the pace of all three together


def test_operators_the_table_does_not_know_count_the_mean_trial():
    clock, out = Clock(), io.StringIO()
    progress = Progress(4, "job", out, todo=["aten::sort", "aten::new", "aten::op0", "aten::op1"],
                        expected=EXPECTED, width=4, clock=clock)
    clock.now = 10.0
    progress.finished(trial("aten::sort", 10.0))
    # left: new (the mean finished trial: 10 s), op0 and op1 (1 s each at this pace), 3 at once
    assert progress.eta(10.0) == pytest.approx((10.0 + 1.0 + 1.0) / 3)


def test_fewer_trials_left_than_the_pool_is_wide_run_no_faster_than_one_each():
    clock, out = Clock(), io.StringIO()
    progress = Progress(2, "job", out, todo=["aten::sort", "aten::op0"], expected=EXPECTED, width=16, clock=clock)
    clock.now = 10.0
    progress.finished(trial("aten::sort", 10.0))
    assert progress.eta(10.0) == pytest.approx(1.0)


def test_without_the_table_the_estimate_is_the_mean_per_finished_trial():
    """A device the table has no figures for, or a trial the table does not know yet."""
    for expected in (None, {}, {"aten::other": 5.0}):
        clock, out = Clock(), io.StringIO()
        progress = Progress(5, "job", out, todo=["aten::a"] * 5, expected=expected, width=2, clock=clock)
        clock.now = 30.0
        progress.finished(trial("aten::a", 30.0))
        assert eta_of(out) == "0:02:00"  # 30 s per trial so far, 4 left


def test_trials_an_earlier_run_finished_are_not_left():
    clock, out = Clock(), io.StringIO()
    progress = Progress(len(TODO) + 5, "job", out, todo=TODO, expected=EXPECTED, width=1, clock=clock)
    progress.skipped_as_done(5)
    clock.now = 10.0
    progress.finished(trial("aten::sort", 10.0))
    assert progress.eta(10.0) == pytest.approx(20.0)  # the 20 short ones, one at a time
