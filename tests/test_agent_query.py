"""Agent columns of the trials table and the leaderboard: checks per success and turns."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from kgb.query.leaderboard import render, rows
from kgb.tracking.log import read_events
from kgb.tracking.projections import trial_outcomes
from kgb.tracking.summary import JobInfo, TrialRow, header, line, parse, trial_row

GOLDEN = Path(__file__).parent / "golden"
BASE = TrialRow(
    job="j", method="aiko", model="m", source="aten", chip="cpu", trial="t", op="aten::a", sample=0,
    status="correct", correct=True, speedup=None, latency_us=None, baseline_us=None, input_tokens=0, output_tokens=0,
    cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0, total_tokens=1000, cost_usd=0.0, wall_s=1.0,
    attempts=1, model_calls=1, reason="", run_id="r", start_ms=0, end_ms=1000,
)


def test_an_agent_trial_row_counts_its_checks_and_turns_and_others_have_none():
    job = JobInfo("j", "claude_code", "m", "aten", "cpu")
    [agent] = trial_outcomes(read_events(GOLDEN / "events-v2-agent.jsonl")).values()
    row = trial_row(job, agent, "run")
    assert (row.checks, row.turns) == (2, 5)
    plain = next(iter(trial_outcomes(read_events(GOLDEN / "events-v2.jsonl")).values()))
    assert (trial_row(job, plain, "run").checks, trial_row(job, plain, "run").turns) == (None, None)
    assert parse(header(job) + line(row)) == [row]  # the columns round-trip through the table


def test_the_leaderboard_reports_checks_per_success_and_turns_per_trial_for_agent_methods():
    trials = [
        dataclasses.replace(BASE, trial="1", op="aten::a", checks=3, turns=10),
        dataclasses.replace(BASE, trial="2", op="aten::b", checks=5, turns=20),
        dataclasses.replace(BASE, trial="3", op="aten::c", checks=4, turns=6, correct=False, status="wrong_output"),
        dataclasses.replace(BASE, trial="4", method="oneshot"),
    ]
    board = {r.method: r for r in rows(trials)}
    assert board["aiko"].checks_per_success == 6.0  # 12 checks, 2 operators solved
    assert board["aiko"].turns_per_trial == 12.0
    assert board["oneshot"].checks_per_success is None and board["oneshot"].turns_per_trial is None
    csv_lines = render(list(board.values()), "csv").splitlines()
    assert "checks_per_success,turns_per_trial" in csv_lines[0] and ",6.000,12.000," in csv_lines[1]


def test_checks_and_turns_count_every_job_of_the_row_as_its_tokens_do():
    """A second job of the row that judged an operator again: its tokens were spent anew and
    counted (JobTrials.spent), and so were its checks and turns; checks per success had
    counted only the operator's latest trial, tokens per success every job's (a user walk)."""
    trials = [
        dataclasses.replace(BASE, job="j1", trial="1", op="aten::a", checks=1, turns=4, end_ms=1000),
        dataclasses.replace(BASE, job="j1", trial="2", op="aten::b", checks=3, turns=6, end_ms=1000),
        dataclasses.replace(BASE, job="j2", trial="1", op="aten::a", checks=2, turns=2, end_ms=2000),
    ]
    [row] = rows(trials)
    assert (row.trials, row.correct, row.total_tokens) == (2, 2, 3000)
    assert row.tokens_per_success == 1500.0
    assert row.checks_per_success == 3.0  # 6 checks in the three trials run, 2 operators solved
    assert row.turns_per_trial == 4.0  # 12 turns over the three trials run
