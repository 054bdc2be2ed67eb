"""The trials table: one row per finished trial of a job, kept as the job run's
`trials.jsonl` artifact in step with its child runs.

Queries (leaderboard, report, best, plots) read one table per job instead of paging
through every child run, so their cost grows with the number of jobs. The first line is
a header naming the job and the columns; each further line is one trial as a JSON array.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import MISSING, asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # queries read tables without importing the folds (and the judge they import)
    from kgb.tracking.projections import TrialOutcome

TABLE_NAME = "trials.jsonl"
# Raised when a table gains what an older kgb would misread rather than refuse: 2 adds the
# header's `method_params`, without which an older reader pooled a method's configurations
# into one row. A table of version 1 is still read (its jobs as their plain method name).
TABLE_VERSION = 2
REASON_CHARS = 500  # the full reason is a tag of the trial run and in its trial.json


def times_cases(settings: str) -> bool:
    """Whether a job judged under this settings line (RunStarted.settings,
    `kgb.identity.Judging.summary`) timed its cases."""
    return any(part.startswith("timed=") for part in settings.split())


def reports_speed(settings: str, speedups: Iterable[float]) -> bool:
    """Whether a share of fast operators (fast_p) means anything for a job: only where it timed
    its cases (on the CPU nothing is timed, and fast_p of 0 would read "none is faster"). A job
    recorded before its settings line was, by whether any trial has a speedup. The one rule of
    the leaderboard, the report, the job's summary and its MLflow metrics."""
    return times_cases(settings) or any(s > 0 for s in speedups)


@dataclass(frozen=True)
class JobInfo:
    """What identifies the job a row belongs to (the table's header)."""

    job: str
    method: str
    model: str
    source: str
    chip: str
    # RunStarted.settings: what the verdicts were judged under; "" in tables written before it
    settings: str = ""
    # the method's parameters that differ from its defaults (kgb.method_params), e.g.
    # "agent.max_turns=4" or "dir=/tmp/k"; "" for the defaults and in tables before version 2
    method_params: str = ""

    @property
    def method_label(self) -> str:
        """As TrialRow.method_label: a job with no trial yet is named as its trials would be."""
        return method_label(self.method, self.method_params)


def method_label(method: str, params: str) -> str:
    return f"{method} {params}" if params else method


@dataclass(frozen=True)
class TrialRow:
    """One finished trial, as queries see it. Absent values are None, never -1."""

    job: str
    method: str
    model: str
    source: str  # the operator's source (a job of source=all mixes them)
    chip: str
    trial: str  # the trial key
    op: str
    sample: int
    status: str  # kgb.tracking.projections.TrialStatus
    correct: bool
    speedup: float | None  # of the best correct candidate, where timed
    latency_us: float | None
    baseline_us: float | None
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    total_tokens: int  # a replay job's: recorded earlier, not spend (kgb.query.scope tells them apart)
    cost_usd: float
    wall_s: float
    attempts: int  # candidates judged
    model_calls: int
    reason: str
    run_id: str  # the trial's MLflow run
    start_ms: int
    end_ms: int
    settings: str = ""  # the job's judging settings (JobInfo.settings)
    # agent trials only (None for other methods and in tables written before them):
    checks: int | None = None  # check-tool calls judged, all attempts together
    turns: int | None = None  # model turns of the agent's sessions (the last attempt, which replays the earlier ones)
    method_params: str = ""  # the job's (JobInfo.method_params)

    @property
    def method_label(self) -> str:
        """The method as the queries show and group it: `aiko`, or `aiko agent.max_turns=4`
        for another configuration of it, which is never pooled with the defaults' trials."""
        return method_label(self.method, self.method_params)


JOB_FIELDS = tuple(f.name for f in fields(JobInfo))
COLUMNS = tuple(f.name for f in fields(TrialRow) if f.name not in JOB_FIELDS or f.name == "source")


def trial_row(job: JobInfo, t: TrialOutcome, run_id: str) -> TrialRow:
    """The row of one finished trial. Its tokens are those its calls carry, a replayed call's
    (model=replay) included, at the cost this run paid: the queries tell a replay job's apart
    as replayed tokens by its model.provider (kgb.query.scope), in tables written before the
    job's own figures did so too."""
    usage = t.usage + t.replayed
    best = t.best
    timed = best.verdict if t.correct and best is not None and best.verdict is not None else None
    return TrialRow(
        job=job.job, method=job.method, model=job.model, source=t.op.split("::")[0], chip=job.chip,
        settings=job.settings, method_params=job.method_params,
        trial=t.key, op=t.op, sample=t.sample, status=t.status.value, correct=t.correct,
        speedup=timed.speedup if timed else None,
        latency_us=timed.latency_us if timed else None,
        baseline_us=timed.baseline_us if timed else None,
        input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens, cache_write_tokens=usage.cache_write_tokens,
        reasoning_tokens=usage.reasoning_tokens, total_tokens=usage.total_tokens, cost_usd=usage.cost_usd,
        wall_s=t.wall_s, attempts=sum(c.verdict is not None for c in t.candidates), model_calls=len(t.calls),
        reason=t.why[:REASON_CHARS], run_id=run_id,
        start_ms=int(t.started_at * 1000), end_ms=int(t.finished_at * 1000),
        **agent_counts(t),
    )


def agent_counts(t: TrialOutcome) -> dict[str, int | None]:
    """An agent trial's checks and turns; None for trials without agent sessions."""
    kinds = [e.kind for e in t.events]
    if "SessionStarted" not in kinds:
        return {"checks": None, "turns": None}
    last_start = len(kinds) - 1 - kinds[::-1].index("TrialStarted") if "TrialStarted" in kinds else 0
    return {"checks": kinds.count("CandidateChecked"), "turns": kinds[last_start:].count("TurnTaken")}


def header(job: JobInfo) -> str:
    return json.dumps({"version": TABLE_VERSION, **asdict(job), "columns": COLUMNS}) + "\n"


def line(row: TrialRow) -> str:
    return json.dumps([getattr(row, c) for c in COLUMNS]) + "\n"


class TableError(ValueError):
    """A trials table this kgb cannot read."""


def job_info(text: str) -> JobInfo:
    """The job of a table written by `header`, from its header alone: a job that finished no
    trial yet (interrupted, or running its first ones) has a header and no row."""
    head: dict[str, Any] = json.loads(text.split("\n", 1)[0])
    if missing := [f.name for f in fields(JobInfo) if f.default is MISSING and f.name not in head]:
        raise TableError(f"the trials table's header names no {', '.join(missing)}")
    return JobInfo(**{f.name: head[f.name] for f in fields(JobInfo) if f.name in head})


def parse(text: str) -> list[TrialRow]:
    """The rows of a table written by `header` and `line`."""
    lines = text.split("\n")
    lines = lines[:-1]  # after the last newline: nothing, or a line being appended (torn)
    if not lines:
        raise TableError("empty trials table")
    head: dict[str, Any] = json.loads(lines[0])
    if head.get("version", 0) > TABLE_VERSION:
        raise TableError(f"trials table version {head.get('version')} is newer than this kgb reads; upgrade kgb")
    columns = head["columns"]
    # each field of a row: its column's position in a line, or the job's value from the header
    where = {c: i for i, c in enumerate(columns)}
    sources = [(where[f.name], None) if f.name in where
               else (None, head.get(f.name, "" if f.default is MISSING else f.default)) for f in fields(TrialRow)]
    try:
        values = json.loads("[" + ",".join(lines[1:]) + "]")  # one parse for the whole table
    except json.JSONDecodeError as e:
        raise TableError(f"corrupt trials table line ({e})") from e
    rows = []
    for v in values:
        if len(v) != len(columns):
            raise TableError(f"a trials table line has {len(v)} values for {len(columns)} columns")
        rows.append(TrialRow(*[v[i] if i is not None else job for i, job in sources]))
    return rows
