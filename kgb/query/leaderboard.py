"""One row per method configuration x model x source x chip x judging settings, from the
jobs' trials tables.

Jobs judged under different settings (case set, timeout, judge version: RunStarted.settings)
never share a row: a smoke-only or a broken-timeout job cannot overwrite a full one. Nor do
jobs of one method configured otherwise (two users' `method.dir`, another
`method.agent.max_turns`): their row's method reads `aiko agent.max_turns=4`
(TrialRow.method_label), the defaults' just `aiko`.

Computed from trials rather than the job runs' aggregate metrics, so that jobs split over
several commands (e.g. `ops=` subsets) still add up. An operator's verdict is its latest
trial's (of each sample), whichever job judged it: an `ops=` job never run again keeps the
trial of a kernel file since edited and judged again by the whole job, and until session 46
that old trial still counted as solved beside the new one. What was spent counts every job's
trials, a trial judged again by another job included: that job paid for its calls anew.
"Latest" is the job's: the trial of the job whose latest run is the most recent, then the
trial that ended last (kgb.query.scope), so that a run that kept a trial, not judging it
again, still has the last word over another job's trial judged before it.

What the store's trials tables alone do not say is counted by kgb.query.scope: an operator
no longer in the source is left out (`removed` says how many), a row missing operators that
a job interrupted or not finished set out to judge says so (`incomplete`: its rates are
over the operators judged; a job that finished no trial yet has such a row, `trials` 0), and
a replay model's calls are not spend (`replayed_tokens`).
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kgb.evaluate.verdict import geomean
from kgb.query.scope import EVERYTHING, End, Scope
from kgb.tracking.summary import JobInfo, TrialRow, reports_speed


@dataclass(frozen=True)
class Row:
    method: str  # and its parameters that differ from its defaults: "files dir=/tmp/k" (TrialRow.method_label)
    model: str
    source: str
    chip: str
    settings: str  # what the verdicts were judged under, e.g. "cpu cases=smoke timeout=300s judge=v2"
    trials: int  # operators that ran (skipped excluded): what the rates are over
    correct: int
    accuracy: float | None  # None where no operator ran (every trial skipped, or none judged yet)
    fast_1_0: float | None  # None where the job timed nothing (the CPU)
    geomean_speedup: float | None
    total_tokens: int
    cost_usd: float
    tokens_per_success: float | None
    skipped: int
    # agent methods (None for the others): the harness's checks per operator solved, and
    # the mean model turns per trial
    checks_per_success: float | None = None
    turns_per_trial: float | None = None
    replayed_tokens: int = 0  # a replay model's calls: the tokens recorded earlier, not spend
    # where a job interrupted (Ctrl-C), not finished, or finished with trials cut short (an
    # infra_error, the job's budget) left operators of the row unjudged, "interrupted: 12 of
    # 210 operators judged"; "" where every operator set out was judged
    incomplete: str = ""
    unjudged: int = 0  # those operators
    removed: int = 0  # operators no longer in the source whose trials are left out


JobKey = tuple[str, str, str, str, str]  # method label, model, source, chip, settings


@dataclass
class JobTrials:
    per_op: dict[str, list[TrialRow]]  # each operator that ran: its latest trial of each sample
    skipped: set[str]  # operators skipped on this chip and never run
    paid: list[TrialRow]  # every job's trials whose calls were paid for: what was spent
    replayed: list[TrialRow] = field(default_factory=list)  # replay jobs' trials: tokens recorded, not paid
    # operators a job interrupted or not finished set out to judge and no job of the row judged,
    # each with how that job ended: not counted, and the row says so
    unjudged: dict[str, End] = field(default_factory=dict)
    removed: set[str] = field(default_factory=set)  # operators no longer in the source: left out

    def spent(self, op: str | None = None) -> tuple[int, float]:
        """(tokens, dollars) spent on all operators, or on one."""
        rows = [r for r in self.paid if op is None or r.op == op]
        return sum(r.total_tokens for r in rows), sum((r.cost_usd for r in rows), 0.0)

    def replayed_tokens(self, op: str | None = None) -> int:
        return sum(r.total_tokens for r in self.replayed if op is None or r.op == op)

    def incomplete(self) -> str:
        """`interrupted: 12 of 210 operators judged` where operators are missing; else ""."""
        if not self.unjudged:
            return ""
        why = ", ".join(sorted(set(self.unjudged.values())))
        return f"{why}: {len(self.per_op)} of {len(self.per_op) + len(self.unjudged)} operators judged"


def job_key(row: TrialRow) -> JobKey:
    return (row.method_label, row.model, row.source, row.chip, row.settings)


def by_job(trials: list[TrialRow], scope: Scope = EVERYTHING) -> dict[JobKey, JobTrials]:
    """The trials by row, as `scope` counts them (kgb.query.scope): operators no longer in
    the source left out, those an unfinished job left unjudged named, replays not spend."""
    groups: dict[JobKey, dict[tuple[str, str], TrialRow]] = defaultdict(dict)
    removed: dict[JobKey, set[str]] = defaultdict(set)
    for row in trials:
        if scope.counts(row.op):
            groups[job_key(row)].setdefault((row.job, row.trial), row)  # a job's table read twice counts once
        else:
            removed[job_key(row)].add(row.op)
    planned = _planned(trials, scope)
    jobs = {}
    for key in sorted(groups.keys() | removed.keys() | planned.keys()):
        rows = groups.get(key, {})
        latest: dict[tuple[str, int], TrialRow] = {}  # (op, sample) -> its latest trial that ran
        skipped = set()
        for row in rows.values():
            if row.status == "skipped":
                skipped.add(row.op)
            elif (slot := (row.op, row.sample)) not in latest or said_later(row, latest[slot], scope):
                latest[slot] = row
        per_op: dict[str, list[TrialRow]] = defaultdict(list)
        for (op, _), row in sorted(latest.items()):
            per_op[op].append(row)
        ran = [r for r in rows.values() if r.status != "skipped"]
        unjudged = {op: end for op, end in sorted(planned.get(key, {}).items()) if op not in per_op and op not in skipped}
        jobs[key] = JobTrials(dict(per_op), skipped - set(per_op),
                              [r for r in ran if not scope.job(r.job).replayed],
                              [r for r in ran if scope.job(r.job).replayed], unjudged, removed.get(key, set()))
    return jobs


def said_later(row: TrialRow, than: TrialRow, scope: Scope) -> bool:
    """Whether `row` is a later statement about its operator than `than`: its job's latest run
    is the more recent (kgb.query.scope, JobFacts.latest_ms), then its trial ended later. Not
    the trial's end alone: a job run again keeps a trial whose key still matches with its old
    end time, and is outranked by another job's trial judged in between."""
    return (scope.job(row.job).latest_ms, row.end_ms) > (scope.job(than.job).latest_ms, than.end_ms)


def _planned(trials: list[TrialRow], scope: Scope) -> dict[JobKey, dict[str, End]]:
    """The operators each job set out to judge, in the current source, by the row they would
    count in (a job of source=all has a row per source), with why one may be missing: how the
    job ended, or for a finished job CUT_SHORT (its trials that did not finish).
    A job's row is named by its trials table's header (JobFacts.info), so that one that
    finished no trial yet has a row too; where a scope has no header, by its trials."""
    rows_of = {row.job: row for row in trials}
    planned: dict[JobKey, dict[str, End]] = defaultdict(dict)
    for job, facts in scope.jobs.items():
        named: JobInfo | TrialRow | None = facts.info or rows_of.get(job)
        if named is None:
            continue
        why = End.CUT_SHORT if facts.end is End.FINISHED else facts.end
        for op in facts.planned:
            if scope.counts(op):
                source = op.split("::")[0]
                # an op of two such jobs of one row: either says why
                planned[(named.method_label, named.model, source, named.chip, named.settings)].setdefault(op, why)
    return planned


def best_speedups(trials: JobTrials) -> dict[str, float]:
    """Per operator solved at least once: its best speedup, 0.0 where nothing was timed."""
    return {
        op: max((r.speedup or 0.0) for r in rs)
        for op, rs in trials.per_op.items()
        if any(r.correct for r in rs)
    }


def rows(trials: list[TrialRow], scope: Scope = EVERYTHING) -> list[Row]:
    table = []
    for key, job in by_job(trials, scope).items():
        per_op = job.per_op
        n = len(per_op)
        best = best_speedups(job)
        timed = [s for s in best.values() if s > 0]
        tokens, cost = job.spent()
        # an agent's effort as its spend is counted: every trial run, a second job's judging
        # of an operator again included (its checks and turns were taken anew)
        agent = [r for r in job.paid + job.replayed if r.checks is not None]
        method, model, source, chip, settings = key
        table.append(Row(
            method=method, model=model, source=source, chip=chip, settings=settings, trials=n, correct=len(best), accuracy=len(best) / n if n else None,
            fast_1_0=sum(1 for s in best.values() if s > 1.0) / n if n and reports_speed(settings, timed) else None,
            geomean_speedup=geomean(timed) if timed else None,
            total_tokens=tokens, cost_usd=cost,
            tokens_per_success=tokens / len(best) if best else None,
            skipped=len(job.skipped),
            checks_per_success=sum(r.checks or 0 for r in agent) / len(best) if agent and best else None,
            turns_per_trial=sum(r.turns or 0 for r in agent) / len(agent) if agent else None,
            replayed_tokens=job.replayed_tokens(), incomplete=job.incomplete(), unjudged=len(job.unjudged),
            removed=len(job.removed),
        ))
    return table


COLUMNS = ("method", "model", "source", "chip", "trials", "correct", "accuracy", "incomplete", "fast_1_0",
           "geomean_speedup", "total_tokens", "tokens_per_success", "cost_usd", "replayed_tokens",
           "checks_per_success", "turns_per_trial", "skipped", "removed", "settings")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def render(table: list[Any], fmt: str, columns: tuple[str, ...] = COLUMNS) -> str:
    """Rows (dataclasses with the named fields) as an aligned table, CSV or markdown."""
    cells = [[_cell(getattr(r, c)) for c in columns] for r in table]
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(columns)
        writer.writerows(cells)
        return out.getvalue()
    widths = [max(len(c), *(len(row[i]) for row in cells)) if cells else len(c) for i, c in enumerate(columns)]
    if fmt == "md":
        lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in cells]
        return "\n".join(lines) + "\n"
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines) + "\n"
