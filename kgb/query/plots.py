"""Figures comparing jobs (method x model x source x chip), from the same trials as the
leaderboard:

- fast_p.png: the share of a job's operators whose kernel is correct and more than p times
  faster than the baseline, against p (the fast_p curve; at p = 1 it is fast_1.0).
- speedups.png: each job's per-operator best speedups, sorted, on a log scale, so that
  a few large wins cannot hide many small losses behind a good geomean.
- cost_accuracy.png: accuracy against model spend (USD; tokens where no price is known).

Every figure promised is either drawn or comes back with the reason it could not be (the
first two need timed trials, which a CPU run has none of). Jobs are told apart by a
legend beside the axes, never by labels placed on the data, so no two labels overlap.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgb.query.leaderboard import JobKey, best_speedups, by_job, rows
from kgb.tracking.summary import TrialRow

P_MIN, P_MAX, P_POINTS = 0.1, 10.0, 200
MARKERS = "os^vD<>pXh*"


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


def label(key: JobKey) -> str:
    method, model, source, chip = key[:4]
    return f"{method}" + (f"/{model}" if model and model != "none" else "") + f" {source} {chip}"


def job_speedups(trials: list[TrialRow]) -> list[JobSpeedups]:
    """Jobs with at least one timed, correct operator."""
    jobs = []
    for key, job in by_job(trials).items():
        timed = sorted((s for s in best_speedups(job).values() if s > 0), reverse=True)
        if timed:
            jobs.append(JobSpeedups(label(key), len(job.per_op), timed))
    return jobs


def thresholds() -> list[float]:
    step = (P_MAX / P_MIN) ** (1 / (P_POINTS - 1))
    return [P_MIN * step**i for i in range(P_POINTS)]


def fast_p(job: JobSpeedups, p: float) -> float:
    return sum(s > p for s in job.speedups) / job.operators if job.operators else 0.0


UNTIMED = "no job has a correct, timed trial (trials on the CPU run in Triton's interpreter and are not timed)"


def draw(trials: list[TrialRow], dest: Path) -> list[Figure]:
    """Writes the figures under dest; returns every promised figure, drawn or not."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a server or in CI
    import matplotlib.pyplot as plt

    dest.mkdir(parents=True, exist_ok=True)
    figures = []
    jobs = job_speedups(trials)
    title = "fast_p per job"
    if jobs:
        fig, ax = plt.subplots(figsize=(11, 5))
        ps = thresholds()
        for i, job in enumerate(jobs):
            ax.plot(ps, [fast_p(job, p) for p in ps], label=job.label, linestyle=("-", "--", ":", "-.")[i // 10 % 4])
        ax.axvline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set(xscale="log", xlabel="speedup threshold p (x, baseline time / kernel time)",
               ylabel="fast_p (share of operators)", ylim=(0, 1.02), title=title)
        figures.append(Figure("fast_p", title, _save(fig, ax, dest / "fast_p.png")))
    else:
        figures.append(Figure("fast_p", title, None, UNTIMED))

    title = "Per-operator speedups (correct and timed operators)"
    if jobs:
        fig, ax = plt.subplots(figsize=(11, 5))
        for i, job in enumerate(jobs):
            ax.plot(range(1, len(job.speedups) + 1), job.speedups, marker=MARKERS[i % len(MARKERS)],
                    markersize=4, label=job.label)
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set(yscale="log", xlabel="operator rank (fastest first)", ylabel="best speedup (x, over the baseline)",
               title=title)
        figures.append(Figure("speedups", title, _save(fig, ax, dest / "speedups.png")))
    else:
        figures.append(Figure("speedups", title, None, UNTIMED))

    title = "Accuracy against spend"
    table = rows(trials)
    if table:
        fig, ax = plt.subplots(figsize=(11, 5))
        priced = any(r.cost_usd > 0 for r in table)
        for i, r in enumerate(table):
            x = r.cost_usd if priced else r.total_tokens
            ax.scatter([x], [100 * r.accuracy], marker=MARKERS[i % len(MARKERS)], s=50,
                       label=label((r.method, r.model, r.source, r.chip)))
        spend = [r.cost_usd if priced else r.total_tokens for r in table]
        if max(spend) > 0 and min(spend) > 0 and max(spend) / min(spend) > 100:
            ax.set_xscale("log")
        ax.set(xlabel="model spend (USD)" if priced else "model spend (tokens)",
               ylabel="accuracy (% of operators correct)", ylim=(-2, 105), title=title)
        figures.append(Figure("cost_accuracy", title, _save(fig, ax, dest / "cost_accuracy.png")))
    else:
        figures.append(Figure("cost_accuracy", title, None, "no finished trial in the store"))
    return figures


def _save(fig: Any, ax: Any, path: Path) -> Path:
    """Legend outside the axes, on the right: it can cover neither data nor labels."""
    import matplotlib.pyplot as plt

    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    ax.grid(True, which="major", alpha=0.3)
    # a fixed right margin holds the legend: a "tight" bounding box would draw the figure twice
    fig.subplots_adjust(left=0.08, right=0.64, bottom=0.11, top=0.93)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
