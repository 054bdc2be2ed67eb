"""Figures comparing jobs (method x model x source x chip), from the same trial runs as the
leaderboard:

- fast_p.png: the share of a job's operators whose kernel is correct and more than p times
  faster than the baseline, against p (the fast_p curve; at p = 1 it is fast_1.0).
- speedups.png: each job's per-operator best speedups, sorted, on a log scale, so that
  a few large wins cannot hide many small losses behind a good geomean.
- cost_accuracy.png: accuracy against model spend (tokens where no price is known).

Jobs with no timed trial (CPU runs) have no speedups; they appear only in the last.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgb.query.leaderboard import JobKey, best_speedups, by_job, rows

P_MIN, P_MAX, P_POINTS = 0.1, 10.0, 200


@dataclass(frozen=True)
class JobSpeedups:
    label: str
    operators: int  # operators that ran: the denominator of fast_p
    speedups: list[float]  # best speedup of each correct, timed operator, descending


def label(key: JobKey) -> str:
    method, model, source, chip = key
    return f"{method}" + (f"/{model}" if model and model != "none" else "") + f" {source} {chip}"


def job_speedups(runs: list[Any]) -> list[JobSpeedups]:
    """Jobs with at least one timed, correct operator."""
    jobs = []
    for key, trials in by_job(runs).items():
        timed = sorted((s for s in best_speedups(trials).values() if s > 0), reverse=True)
        if timed:
            jobs.append(JobSpeedups(label(key), len(trials.per_op), timed))
    return jobs


def thresholds() -> list[float]:
    step = (P_MAX / P_MIN) ** (1 / (P_POINTS - 1))
    return [P_MIN * step**i for i in range(P_POINTS)]


def fast_p(job: JobSpeedups, p: float) -> float:
    return sum(s > p for s in job.speedups) / job.operators if job.operators else 0.0


def draw(runs: list[Any], dest: Path) -> list[Path]:
    """Writes the figures under dest; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a server or in CI
    import matplotlib.pyplot as plt

    dest.mkdir(parents=True, exist_ok=True)
    written = []
    jobs = job_speedups(runs)
    if jobs:
        fig, ax = plt.subplots(figsize=(8, 5))
        ps = thresholds()
        for job in jobs:
            ax.plot(ps, [fast_p(job, p) for p in ps], label=job.label)
        ax.axvline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set(xscale="log", xlabel="speedup threshold p (baseline time / kernel time)",
               ylabel="fast_p: share of operators correct and faster than p", ylim=(0, 1.02),
               title="fast_p per job")
        ax.legend(fontsize="small")
        written.append(_save(fig, dest / "fast_p.png"))

        fig, ax = plt.subplots(figsize=(8, 5))
        for job in jobs:
            ax.plot(range(1, len(job.speedups) + 1), job.speedups, marker=".", label=job.label)
        ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
        ax.set(yscale="log", xlabel="operators, fastest first", ylabel="best speedup over baseline",
               title="Per-operator speedups (correct and timed operators)")
        ax.legend(fontsize="small")
        written.append(_save(fig, dest / "speedups.png"))

    table = rows(runs)
    if table:
        fig, ax = plt.subplots(figsize=(8, 5))
        priced = any(r.cost_usd > 0 for r in table)
        for r in table:
            x = r.cost_usd if priced else r.total_tokens
            ax.scatter([x], [r.accuracy])
            ax.annotate(label((r.method, r.model, r.source, r.chip)), (x, r.accuracy), fontsize="small",
                        textcoords="offset points", xytext=(4, 4))
        ax.set(xlabel="model cost (USD)" if priced else "model tokens", ylabel="accuracy (share of operators correct)",
               ylim=(-0.02, 1.05), title="Accuracy against spend")
        written.append(_save(fig, dest / "cost_accuracy.png"))
    return written


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
