"""Figures comparing jobs (method configuration x model x source x chip), from the same
trials as the leaderboard:

- fast_p.svg: the share of a job's operators whose kernel is correct and more than p times
  faster than the baseline, against p (the fast_p curve; at p = 1 it is fast_1.0).
- speedups.svg: each job's per-operator best speedups, sorted, on a log scale, so that
  a few large wins cannot hide many small losses behind a good geomean.
- cost_accuracy.svg: accuracy against model spend (USD; tokens where no price is known).

The figures are drawn from the operators the report's tables count (kgb.query.report's
OpResult: those judged, not those removed from the source or left unjudged), so a figure and
a table never disagree, and written as SVG (kgb.query.chart).

Every figure promised is either drawn or comes back with the reason it could not be (the
first two need timed trials, which a CPU run has none of). Jobs are told apart by a
legend beside the axes, never by labels placed on the data, so no two labels overlap.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgb.query.chart import Axis, Chart, ScaleKind, Series, render
from kgb.query.report import OpResult

P_MIN, P_MAX, P_POINTS = 0.1, 10.0, 200
MARKERS = "os^vD<>pXh*"
LINES = ("-", "--", ":", "-.")  # after every ten jobs the colours repeat: the dash tells them apart


@dataclass(frozen=True)
class Figure:
    """A promised figure: its file, or why it was not drawn."""

    name: str
    title: str
    path: Path | None
    reason: str = ""


@dataclass(frozen=True)
class JobSpeedups:
    label: str
    operators: int  # operators that ran: the denominator of fast_p
    speedups: list[float]  # best speedup of each correct, timed operator, descending


@dataclass(frozen=True)
class JobSpend:
    label: str
    accuracy: float  # share of the job's operators correct
    tokens: int
    cost_usd: float


def label(method: str, model: str, source: str, chip: str) -> str:
    """`aiko/claude agent.max_turns=4 aten nvidia`: the model beside the method's name, before
    the parameters that tell its configuration from the defaults (TrialRow.method_label)."""
    name, _, params = method.partition(" ")
    return name + (f"/{model}" if model and model != "none" else "") + (f" {params}" if params else "") + f" {source} {chip}"


def per_job(results: list[OpResult]) -> list[tuple[str, list[OpResult]]]:
    """The label and judged operators of each job with any (jobs judged under other settings
    apart), in the order op_results lists them: the leaderboard's. A job missing operators
    that an interrupted or unfinished job left unjudged says so in its label, as the
    leaderboard's `incomplete` does: its curves are over the operators judged."""
    jobs: dict[tuple[str, str, str, str, str], list[OpResult]] = {}
    for r in results:
        jobs.setdefault((r.method, r.model, r.source, r.chip, r.settings), []).append(r)
    made = []
    for key, ops in jobs.items():
        judged = [r for r in ops if r.judged]
        if not judged:
            continue
        name = label(*key[:4])
        if ends := sorted({r.state for r in ops if r.unjudged}):
            name += f" ({', '.join(ends)}: {len(judged)} of {len(judged) + sum(r.unjudged for r in ops)} judged)"
        made.append((name, judged))
    return made


def job_speedups(results: list[OpResult]) -> list[JobSpeedups]:
    """Jobs with at least one timed, correct operator."""
    jobs = []
    for name, ops in per_job(results):
        timed = sorted((r.speedup for r in ops if r.correct and r.speedup > 0), reverse=True)
        if timed:
            jobs.append(JobSpeedups(name, len(ops), timed))
    return jobs


def job_spend(results: list[OpResult]) -> list[JobSpend]:
    return [JobSpend(name, sum(r.correct for r in ops) / len(ops), sum(r.tokens for r in ops), sum(r.cost_usd for r in ops))
            for name, ops in per_job(results)]


def thresholds() -> list[float]:
    step = (P_MAX / P_MIN) ** (1 / (P_POINTS - 1))
    return [P_MIN * step**i for i in range(P_POINTS)]


def fast_p(job: JobSpeedups, p: float) -> float:
    return sum(s > p for s in job.speedups) / job.operators if job.operators else 0.0


UNTIMED = "no job has a correct, timed trial (trials on the CPU run in Triton's interpreter and are not timed)"


def charts(results: list[OpResult]) -> list[tuple[str, str, Chart | str]]:
    """Every promised figure as (file stem, title, its chart or why it cannot be drawn)."""
    jobs = job_speedups(results)
    made: list[tuple[str, str, Chart | str]] = []
    title = "fast_p per job"
    ps = thresholds()
    made.append(("fast_p", title, Chart(
        title, Axis("speedup threshold p (x, baseline time / kernel time)", ScaleKind.LOG, (P_MIN, P_MAX)),
        Axis("fast_p (share of operators)", limits=(0, 1.02)),
        [Series(job.label, ps, [fast_p(job, p) for p in ps], line=LINES[i // 10 % len(LINES)]) for i, job in enumerate(jobs)],
        x_marks=[1.0]) if jobs else UNTIMED))

    title = "Per-operator speedups (correct and timed operators)"
    made.append(("speedups", title, Chart(
        title, Axis("operator rank (fastest first)"), Axis("best speedup (x, over the baseline)", ScaleKind.LOG),
        [Series(job.label, [float(r) for r in range(1, len(job.speedups) + 1)], job.speedups,
                marker=MARKERS[i % len(MARKERS)], marker_size=3) for i, job in enumerate(jobs)],
        y_marks=[1.0]) if jobs else UNTIMED))

    title = "Accuracy against spend"
    table = job_spend(results)
    if not table:
        made.append(("cost_accuracy", title, "no finished trial in the store"))
        return made
    priced = any(r.cost_usd > 0 for r in table)
    spend = [r.cost_usd if priced else float(r.tokens) for r in table]
    wide = min(spend) > 0 and max(spend) / min(spend) > 100
    made.append(("cost_accuracy", title, Chart(
        title, Axis("model spend (USD)" if priced else "model spend (tokens)", ScaleKind.LOG if wide else ScaleKind.LINEAR),
        Axis("accuracy (% of operators correct)", limits=(-2, 105)),
        [Series(r.label, [x], [100 * r.accuracy], line=None,
                marker=MARKERS[i % len(MARKERS)], marker_size=5) for i, (r, x) in enumerate(zip(table, spend, strict=True))])))
    return made


def draw(results: list[OpResult], dest: Path) -> list[Figure]:
    """Writes the figures under dest as SVG; returns every promised figure, drawn or not."""
    dest.mkdir(parents=True, exist_ok=True)
    figures = []
    for name, title, chart in charts(results):
        if isinstance(chart, str):
            figures.append(Figure(name, title, None, chart))
            continue
        path = dest / f"{name}.svg"
        path.write_text(render(chart))
        figures.append(Figure(name, title, path))
    return figures
