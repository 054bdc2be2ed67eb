"""fast_p and the figures, from trial rows as the jobs' trials tables hold them."""

from __future__ import annotations

from kgb.query.plots import UNTIMED, draw, fast_p, job_speedups
from kgb.tracking.summary import TrialRow


def trial(op: str, method: str, *, correct: bool, speedup: float | None = None, chip: str = "nvidia",
          status: str | None = None, tokens: int = 0, cost: float = 0.0, model: str = "none") -> TrialRow:
    return TrialRow(
        job=f"{method}-{chip}", method=method, model=model, source="aten", chip=chip, trial=f"{method}-{op}-{chip}",
        op=op, sample=0, status=status or ("correct" if correct else "wrong_output"), correct=correct,
        speedup=speedup, latency_us=None, baseline_us=None, input_tokens=tokens, output_tokens=0,
        cache_read_tokens=0, cache_write_tokens=0, reasoning_tokens=0, total_tokens=tokens, cost_usd=cost,
        wall_s=1.0, attempts=1, model_calls=0, reason="", run_id="r", start_ms=0, end_ms=1000,
    )


RUNS = [
    trial("aten::a", "expert", correct=True, speedup=2.0),
    trial("aten::b", "expert", correct=True, speedup=0.5),
    trial("aten::c", "expert", correct=False),
    trial("aten::d", "expert", correct=True, speedup=1.2),
    trial("aten::a", "oneshot", correct=True, speedup=3.0, tokens=900, cost=0.01),
    trial("aten::b", "oneshot", correct=False, tokens=1200, cost=0.02),
    trial("aten::a", "files", correct=True, chip="cpu"),  # interpreter: correct, never timed
]


def test_fast_p_counts_correct_operators_beyond_p_over_all_that_ran():
    jobs = {j.label: j for j in job_speedups(RUNS)}
    expert = jobs["expert aten nvidia"]
    assert expert.operators == 4 and expert.speedups == [2.0, 1.2, 0.5]
    assert fast_p(expert, 0.1) == 0.75  # the three correct ones
    assert fast_p(expert, 1.0) == 0.5  # fast_1.0, as on the leaderboard
    assert fast_p(expert, 2.0) == 0.0  # strictly faster than p
    assert fast_p(jobs["oneshot aten nvidia"], 1.0) == 0.5
    assert "files aten cpu" not in jobs  # nothing timed, no curve


def test_draw_writes_the_three_figures(tmp_path):
    figures = draw(RUNS, tmp_path / "plots")
    assert [f.name for f in figures] == ["fast_p", "speedups", "cost_accuracy"]
    for f in figures:
        assert f.path is not None and f.reason == ""
        assert f.path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f.path.stat().st_size > 5000


def test_untimed_runs_say_why_two_figures_are_not_drawn(tmp_path):
    figures = draw([r for r in RUNS if r.chip == "cpu"], tmp_path)
    assert [(f.name, f.path is None, f.reason) for f in figures[:2]] == [("fast_p", True, UNTIMED), ("speedups", True, UNTIMED)]
    assert figures[2].path is not None and figures[2].path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cost_accuracy.png"]


def test_labels_are_in_a_legend_outside_the_axes_and_axes_have_units(tmp_path, monkeypatch):
    """Labels on the data can overlap; a legend beside the axes cannot cover them."""
    import matplotlib.pyplot as plt

    seen = []
    monkeypatch.setattr(plt, "close", lambda fig: seen.append(fig))
    many = [trial(f"aten::{i}", f"m{i}", correct=True, speedup=1.0 + i / 10, tokens=1000 + i, cost=0.01) for i in range(12)]
    draw(many, tmp_path)
    assert len(seen) == 3
    for fig in seen:
        ax = fig.axes[0]
        assert not ax.texts  # no annotation placed on the data
        legend = ax.get_legend()
        assert legend is not None and len(legend.get_texts()) == 12
        fig.canvas.draw()
        box, axes_box = legend.get_window_extent(), ax.get_window_extent()
        assert box.x0 >= axes_box.x1  # entirely to the right of the axes
        assert "(" in ax.get_xlabel() and "(" in ax.get_ylabel()  # a unit in brackets


def test_a_zero_speedup_is_not_a_timing():
    runs = [trial("aten::a", "expert", correct=True, speedup=0.0)]
    assert job_speedups(runs) == []
