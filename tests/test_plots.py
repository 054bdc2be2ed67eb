"""fast_p and the figures, from trial runs shaped like MLflow's."""

from __future__ import annotations

from types import SimpleNamespace

from kgb.query.plots import draw, fast_p, job_speedups


def trial(op: str, method: str, *, correct: bool, speedup: float | None = None, chip: str = "nvidia",
          status: str | None = None, tokens: int = 0, cost: float = 0.0) -> SimpleNamespace:
    metrics = {"correct": 1.0 if correct else 0.0, "total_tokens": tokens, "cost_usd": cost}
    if speedup is not None:
        metrics["speedup"] = speedup
    tags = {"kgb.method": method, "kgb.model": "none", "kgb.source": "aten", "kgb.chip": chip,
            "kgb.op": op, "kgb.trial": f"{method}-{op}-{chip}",
            "kgb.status": status or ("correct" if correct else "wrong_output")}
    return SimpleNamespace(data=SimpleNamespace(tags=tags, metrics=metrics))


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
    paths = draw(RUNS, tmp_path / "plots")
    assert sorted(p.name for p in paths) == ["cost_accuracy.png", "fast_p.png", "speedups.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


def test_untimed_runs_give_only_the_accuracy_figure(tmp_path):
    paths = draw([r for r in RUNS if r.data.tags["kgb.chip"] == "cpu"], tmp_path)
    assert [p.name for p in paths] == ["cost_accuracy.png"]


def test_a_zero_speedup_is_not_a_timing():
    runs = [trial("aten::a", "expert", correct=True, speedup=0.0)]
    assert job_speedups(runs) == []
