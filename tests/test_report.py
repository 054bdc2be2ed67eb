"""The paper's tables: Wilson and bootstrap intervals, the operator as the unit, formats."""

from __future__ import annotations

import dataclasses
import math

import pytest

from kgb.query.report import csv_text, latex, markdown, op_results, tables, write
from kgb.query.stats import Interval, bootstrap_geomean, wilson
from kgb.tracking.summary import TrialRow

BASE = TrialRow(
    job="j", method="oneshot", model="claude", source="aten", chip="nvidia", trial="t", op="aten::a", sample=0,
    status="correct", correct=True, speedup=2.0, latency_us=1.0, baseline_us=2.0, input_tokens=0, output_tokens=0,
    cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0, total_tokens=1000, cost_usd=0.5, wall_s=1.0,
    attempts=1, model_calls=1, reason="", run_id="r", start_ms=0, end_ms=1000,
)


def row(op: str, **changes) -> TrialRow:
    fields = {"op": op, "trial": f"{changes.get('chip', 'nvidia')}-{op}-{changes.get('sample', 0)}", **changes}
    if fields.get("correct") is False:
        fields.update(status="wrong_output", speedup=None)
    return dataclasses.replace(BASE, **fields)


def test_wilson_interval_matches_the_textbook_values():
    assert wilson(8, 10).low == pytest.approx(0.4902, abs=1e-4)
    assert wilson(8, 10).high == pytest.approx(0.9433, abs=1e-4)
    assert wilson(0, 5).low == 0.0 and wilson(5, 5).high == 1.0  # sound at the edges
    assert wilson(0, 0) is None


def test_bootstrap_interval_holds_the_geomean_and_is_reproducible():
    values = [0.5, 0.8, 1.1, 1.3, 2.0, 3.5, 0.9, 1.7]
    ci = bootstrap_geomean(values)
    gm = math.exp(sum(map(math.log, values)) / len(values))
    assert ci.low < gm < ci.high and ci.low > min(values) and ci.high < max(values)
    assert bootstrap_geomean(values) == ci
    assert bootstrap_geomean([1.5, 1.5, 1.5]) == Interval(pytest.approx(1.5), pytest.approx(1.5))
    assert bootstrap_geomean([2.0]) is None


TRIALS = [
    row("aten::a", speedup=2.0),
    row("aten::b", speedup=0.9),
    row("aten::c", correct=False),
    row("aten::c", correct=True, speedup=1.6, sample=1),  # a second sample solves c: c counts once, correct
    row("aten::d", correct=False, total_tokens=3000, cost_usd=1.5),
    row("aten::a", chip="cpu", speedup=None),  # the interpreter: correct, not timed
]


def test_tables_count_operators_with_intervals():
    accuracy, chips, cost = tables(op_results(TRIALS))
    names = [c.name for c in accuracy.columns]
    nvidia = dict(zip(names, next(r for r in accuracy.rows if r[3] == "nvidia"), strict=True))
    assert (nvidia["operators"], nvidia["correct"], nvidia["accuracy"]) == (4, 3, 0.75)
    assert nvidia["accuracy 95% CI"] == wilson(3, 4)
    assert (nvidia["fast_0.8"], nvidia["fast_1.0"], nvidia["fast_1.5"]) == (0.75, 0.5, 0.5)
    assert nvidia["geomean speedup"] == pytest.approx((2.0 * 0.9 * 1.6) ** (1 / 3))
    assert nvidia["geomean 95% CI"] == bootstrap_geomean([2.0, 0.9, 1.6])
    cpu = dict(zip(names, next(r for r in accuracy.rows if r[3] == "cpu"), strict=True))
    assert (cpu["accuracy"], cpu["timed"], cpu["geomean speedup"], cpu["geomean 95% CI"]) == (1.0, 0, None, None)
    assert [r[:3] for r in chips.rows] == [["oneshot", "claude", "cpu"], ["oneshot", "claude", "nvidia"]]
    spend = dict(zip([c.name for c in cost.columns], cost.rows[0], strict=True))
    assert (spend["operators"], spend["successes"], spend["tokens"]) == (5, 4, 8000)
    assert spend["tokens per success"] == 2000 and spend["USD per success"] == pytest.approx(1.0)


def test_formats_carry_the_same_numbers():
    accuracy = tables(op_results(TRIALS))[0]
    md = markdown(accuracy)
    assert "| oneshot | claude | aten | nvidia |  | 4 | 3 | 0.750 | [0.301, 0.954] |" in md
    csv = csv_text(accuracy).splitlines()
    assert csv[0].split(",")[:10] == ["method", "model", "source", "chip", "settings", "operators", "correct",
                                      "accuracy", "accuracy 95% CI low", "accuracy 95% CI high"]
    assert len(csv) == 3
    tex = latex(accuracy)
    assert "\\begin{tabular}{lllll" in tex and "fast\\_0.8" in tex and "\\bottomrule" in tex
    assert "[0.301, 0.954]" in tex


def test_write_makes_every_file_and_a_page_with_the_plots_or_why_not(tmp_path):
    (tmp_path / "plots").mkdir()
    svg = tmp_path / "plots" / "fast_p.svg"
    svg.write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    paths = write(op_results(TRIALS), len(TRIALS), tmp_path,
                  [("fast_p per job", svg), ("Per-operator speedups", "no job has a correct, timed trial")])
    assert sorted(p.name for p in paths) == sorted(
        [f"{t}.{s}" for t in ("accuracy", "chips", "cost") for s in ("md", "csv", "tex")] + ["report.html"])
    page = (tmp_path / "report.html").read_text()
    assert "<img src='plots/fast_p.svg'" in page and f"<p>{len(TRIALS)} trial(s)." in page
    assert "Per-operator speedups</b>: not drawn: no job has a correct, timed trial" in page
    assert page.count("<table>") == 3


def test_jobs_judged_under_different_settings_never_share_a_report_row():
    """A sweep's operators judged again under other settings (cases=check, a compile check)
    were counted twice in one row: 214 operators of 210 (session 45's user walk)."""
    from dataclasses import replace

    smoke = op_results(TRIALS)
    both = smoke + [replace(r, settings="cpu cases=check") for r in smoke]
    accuracy, chips, cost = tables(both)
    assert len(accuracy.rows) == 2 * len(tables(smoke)[0].rows)
    operators = [c.name for c in chips.columns].index("operators")
    assert sorted(r[operators] for r in chips.rows) == sorted(2 * [r[operators] for r in tables(smoke)[1].rows])
    assert len(cost.rows) == 2


def test_jobs_judged_under_different_settings_never_share_a_leaderboard_row():
    from dataclasses import fields

    from kgb.query.leaderboard import rows
    from kgb.tracking.summary import TrialRow

    def trial(settings: str, correct: bool) -> TrialRow:
        values = {f.name: 0 for f in fields(TrialRow)}
        values.update(job=f"j-{settings}", method="expert", model="none", source="aten", chip="cpu", trial=f"t-{settings}",
                      op="aten::add", sample=0, status="correct" if correct else "timeout", correct=correct,
                      speedup=None, latency_us=None, baseline_us=None, reason="", run_id="r", settings=settings)
        return TrialRow(**values)

    table = rows([trial("cpu cases=smoke timeout=300s judge=v2", True), trial("cpu cases=smoke timeout=1s judge=v2", False)])
    assert sorted((r.settings, r.correct) for r in table) == [
        ("cpu cases=smoke timeout=1s judge=v2", 0), ("cpu cases=smoke timeout=300s judge=v2", 1)]


def test_jobs_of_one_method_configured_otherwise_never_share_a_row_and_say_how():
    """`method=files` over two users' folders, aiko with `method.agent.max_turns=4`: pooled
    into one row each (pass@N over both) until a user's walk; each configuration is now a
    row, a table's row and a figure's job of its own, named by what is not the defaults."""
    from kgb.query.leaderboard import rows
    from kgb.query.plots import per_job

    trials = [row("aten::a", method="files", method_params="dir=/tmp/k", job="j1"),
              row("aten::a", method="files", method_params="dir=/home/u/k", correct=False, job="j2"),
              row("aten::a", method="aiko", job="j3"),
              row("aten::a", method="aiko", method_params="agent.max_turns=4", correct=False, job="j4")]
    trials = [dataclasses.replace(t, trial=t.job) for t in trials]
    expected = [("aiko", 1), ("aiko agent.max_turns=4", 0), ("files dir=/home/u/k", 0), ("files dir=/tmp/k", 1)]
    assert sorted((r.method, r.correct) for r in rows(trials)) == expected
    accuracy = tables(op_results(trials))[0]
    assert sorted((r[0], r[6]) for r in accuracy.rows) == expected  # method, correct
    assert sorted(name for name, _ in per_job(op_results(trials))) == [
        "aiko/claude agent.max_turns=4 aten nvidia", "aiko/claude aten nvidia",
        "files/claude dir=/home/u/k aten nvidia", "files/claude dir=/tmp/k aten nvidia"]


def test_an_operators_verdict_is_its_latest_trials_and_every_jobs_spend_counts():
    """A user's walk (session 46): a files job's kernel for aten::a, correct, then edited and
    judged wrong by the whole job; an `ops=` job of one operator, never run again, kept the old
    trial, and the leaderboard and the report counted aten::a as solved beside the job's own
    summary's wrong_output. And a trial that a second job judged again (its key leaves the job
    out) was paid for twice but counted once."""
    from kgb.query.leaderboard import rows

    old = row("aten::a", job="ops-job", trial="t-old-file", end_ms=1_000, total_tokens=1000, cost_usd=0.5)
    new = row("aten::a", job="whole-job", trial="t-new-file", end_ms=2_000, correct=False, total_tokens=0, cost_usd=0.0)
    b_first = row("aten::b", job="whole-job", trial="t-b", end_ms=1_500, total_tokens=300, cost_usd=0.1)
    b_again = row("aten::b", job="ops-job-2", trial="t-b", end_ms=2_500, total_tokens=300, cost_usd=0.1)
    trials = [old, new, b_first, b_again]
    [table] = rows(trials)
    assert (table.trials, table.correct) == (2, 1)  # aten::a's latest is wrong, aten::b correct
    assert (table.total_tokens, table.cost_usd) == (1600, pytest.approx(0.7))  # every job's calls
    assert sorted((r.correct, r.tokens) for r in op_results(trials)) == [(False, 1000), (True, 600)]
    assert rows(trials[::-1]) == [table]  # whatever order the jobs' tables are read in


def test_the_report_command_writes_the_tables_and_the_figures_it_shows(tmp_path, monkeypatch, capsys):
    import kgb.query.__main__ as query
    from kgb.query.scope import Scope
    from kgb.query.store import Contents

    monkeypatch.setattr(query, "read", lambda uri, experiments=(): Contents(TRIALS, {}))
    monkeypatch.setattr(query, "current", lambda jobs: Scope(None, jobs))  # TRIALS' operators are made up
    assert query.main(["report", "--dest", str(tmp_path / "full"), "--tracking-uri", "sqlite:///unused.db"]) == 0
    page = (tmp_path / "full" / "report.html").read_text()
    for name in ("fast_p", "speedups", "cost_accuracy"):  # TRIALS has timed trials: every figure is drawn
        assert (tmp_path / "full" / "plots" / f"{name}.svg").read_text().startswith("<svg ")
        assert f"<img src='plots/{name}.svg'" in page
    assert query.main(["report", "--no-plots", "--dest", str(tmp_path / "tables"), "--tracking-uri", "sqlite:///unused.db"]) == 0
    assert not (tmp_path / "tables" / "plots").exists()
    assert "<img" not in (tmp_path / "tables" / "report.html").read_text()
    printed = capsys.readouterr().out.splitlines()
    assert str(tmp_path / "tables" / "accuracy.md") in printed and str(tmp_path / "full" / "report.html") in printed
