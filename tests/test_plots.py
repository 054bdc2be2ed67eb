"""fast_p and the figures, from trial rows as the jobs' trials tables hold them."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

from kgb.query.chart import linear_ticks, log_ticks
from kgb.query.plots import UNTIMED, draw, fast_p, job_speedups, thresholds
from kgb.query.report import op_results, tables
from kgb.tracking.summary import TrialRow

SVG = "{http://www.w3.org/2000/svg}"


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
    jobs = {j.label: j for j in job_speedups(op_results(RUNS))}
    expert = jobs["expert aten nvidia"]
    assert expert.operators == 4 and expert.speedups == [2.0, 1.2, 0.5]
    assert fast_p(expert, 0.1) == 0.75  # the three correct ones
    assert fast_p(expert, 1.0) == 0.5  # fast_1.0, as on the leaderboard
    assert fast_p(expert, 2.0) == 0.0  # strictly faster than p
    assert fast_p(jobs["oneshot aten nvidia"], 1.0) == 0.5
    assert "files aten cpu" not in jobs  # nothing timed, no curve


class Figure:
    """An SVG figure read back: its axes box and, per axis, pixels back to data values
    through the tick marks' own values (so the test trusts no scale code of the chart)."""

    def __init__(self, path: Path, x_log: bool, y_log: bool):
        self.root = ET.parse(path).getroot()
        axes = self.root.find(f".//{SVG}rect[@class='axes']")
        assert axes is not None
        self.left, self.top = float(axes.get("x")), float(axes.get("y"))
        self.right, self.bottom = self.left + float(axes.get("width")), self.top + float(axes.get("height"))
        self.x = self._inverse("tick-x", "x1", x_log)
        self.y = self._inverse("tick-y", "y1", y_log)

    def _inverse(self, cls: str, attr: str, log: bool):
        ticks = [(float(t.get("data-value")), float(t.get(attr))) for t in self.root.iter(f"{SVG}line") if t.get("class") == cls]
        assert len(ticks) >= 2
        f, g = (math.log10, lambda v: 10**v) if log else ((lambda v: v), (lambda v: v))
        (v0, p0), (v1, p1) = ticks[0], ticks[-1]
        return lambda px: g(f(v0) + (px - p0) / (p1 - p0) * (f(v1) - f(v0)))

    def curves(self) -> dict[str, list[tuple[float, float]]]:
        """Each line's label and its points in data values."""
        out = {}
        for line in self.root.iter(f"{SVG}polyline"):
            pairs = [tuple(map(float, xy.split(","))) for xy in line.get("points").split()]
            out[line.get("data-label")] = [(self.x(px), self.y(py)) for px, py in pairs]
        return out

    def markers(self) -> dict[str, list[tuple[float, float]]]:
        """Each series' markers in data values (a polygon's centre: the mean of its corners)."""
        out = {}
        for group in self.root.iter(f"{SVG}g"):
            if group.get("class") != "markers":
                continue
            points = []
            for m in group:
                if m.tag == f"{SVG}circle":
                    px, py = float(m.get("cx")), float(m.get("cy"))
                else:
                    corners = [tuple(map(float, xy.split(","))) for xy in m.get("points").split()]
                    px, py = sum(c[0] for c in corners) / len(corners), sum(c[1] for c in corners) / len(corners)
                points.append((self.x(px), self.y(py)))
            out[group.get("data-label")] = points
        return out


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=2e-3, abs_tol=1e-3)


def test_the_figures_show_what_the_tables_count(tmp_path):
    results = op_results(RUNS)
    figures = draw(results, tmp_path / "plots")
    assert [f.name for f in figures] == ["fast_p", "speedups", "cost_accuracy"]
    assert all(f.path == tmp_path / "plots" / f"{f.name}.svg" and f.reason == "" for f in figures)

    curves = Figure(figures[0].path, x_log=True, y_log=False).curves()
    jobs = {j.label: j for j in job_speedups(results)}
    assert sorted(curves) == sorted(jobs) == ["expert aten nvidia", "oneshot aten nvidia"]
    for name, points in curves.items():
        assert len(points) == len(thresholds())
        assert all(close(x, p) and close(y, fast_p(jobs[name], p)) for (x, y), p in zip(points, thresholds(), strict=True))

    speedups = Figure(figures[1].path, x_log=False, y_log=True)
    assert {name: [round(y, 3) for _, y in points] for name, points in speedups.markers().items()} == {
        "expert aten nvidia": [2.0, 1.2, 0.5], "oneshot aten nvidia": [3.0]}
    assert [round(x, 3) for x, _ in speedups.markers()["expert aten nvidia"]] == [1.0, 2.0, 3.0]  # ranks
    # the plotted speedups have the geomean the accuracy table gives their job
    accuracy = tables(results)[0]
    names = [c.name for c in accuracy.columns]
    expert = dict(zip(names, next(r for r in accuracy.rows if r[0] == "expert" and r[3] == "nvidia"), strict=True))
    plotted = [y for _, y in speedups.markers()["expert aten nvidia"]]
    assert close(math.exp(sum(map(math.log, plotted)) / len(plotted)), expert["geomean speedup"])

    spend = Figure(figures[2].path, x_log=False, y_log=False).markers()
    # (USD, % correct) per job: expert 3 of 4, oneshot 1 of 2 for 0.03 USD, files on the CPU 1 of 1
    expected = {"expert aten nvidia": (0.0, 75.0), "oneshot aten nvidia": (0.03, 50.0), "files aten cpu": (0.0, 100.0)}
    assert sorted(spend) == sorted(expected)
    for name, [(x, y)] in spend.items():
        assert close(x, expected[name][0]) and close(y, expected[name][1]), (name, x, y)
    assert close(expert["accuracy"] * 100, spend["expert aten nvidia"][0][1])


def test_untimed_runs_say_why_two_figures_are_not_drawn(tmp_path):
    figures = draw(op_results([r for r in RUNS if r.chip == "cpu"]), tmp_path)
    assert [(f.name, f.path is None, f.reason) for f in figures[:2]] == [("fast_p", True, UNTIMED), ("speedups", True, UNTIMED)]
    assert figures[2].path is not None and figures[2].path.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cost_accuracy.svg"]


def test_labels_are_in_a_legend_outside_the_axes_and_axes_have_units(tmp_path):
    """Labels on the data can overlap; a legend beside the axes cannot cover them."""
    many = [trial(f"aten::{i}", f"method-with-a-long-name-{i}", correct=True, speedup=1.0 + i / 10, tokens=1000 + i,
                  cost=0.01 * (i + 1)) for i in range(12)]
    figures = draw(op_results(many), tmp_path)
    assert all(f.path is not None for f in figures)
    for f in figures:
        svg = Figure(f.path, x_log=f.name == "fast_p", y_log=f.name == "speedups")
        entries = [g for g in svg.root.iter(f"{SVG}g") if g.get("class") == "legend-entry"]
        assert len(entries) == 12
        width = float(svg.root.get("width"))
        for entry in entries:
            text = entry.find(f"{SVG}text")
            x = float(text.get("x"))
            assert x > svg.right  # entirely to the right of the axes
            assert x + 7.2 * len(text.text) <= width  # and inside the picture, long labels too
        rows = [float(e.find(f"{SVG}text").get("y")) for e in entries]
        assert all(b - a >= 12 for a, b in zip(rows, rows[1:], strict=False))  # no two entries overlap
        texts = [t for t in svg.root.iter(f"{SVG}text")]
        inside = [t.text for t in texts
                  if svg.left < float(t.get("x")) < svg.right and svg.top < float(t.get("y")) < svg.bottom]
        assert inside == []  # no annotation placed on the data
        labels = {t.get("class"): t.text for t in texts if t.get("class")}
        assert "(" in labels["x-label"] and "(" in labels["y-label"]  # a unit in brackets


def test_ticks_are_round_values_inside_the_range():
    assert linear_ticks(-2, 105) == [0, 20, 40, 60, 80, 100]
    assert linear_ticks(0.0, 0.031) == [0.0, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03]
    assert log_ticks(0.1, 10) == [0.1, 1.0, 10.0]
    assert log_ticks(0.5, 20) == [0.5, 1.0, 2.0, 5.0, 10.0, 20.0]  # too few decades: 2x and 5x too
    assert log_ticks(0.9, 4) == [0.9, 1.0, 2.0, 3.0, 4.0]  # still too few: every mantissa


def test_a_zero_speedup_is_not_a_timing():
    runs = [trial("aten::a", "expert", correct=True, speedup=0.0)]
    assert job_speedups(op_results(runs)) == []
