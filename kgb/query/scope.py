"""What the queries count beyond the jobs' trials tables, from facts of the job runs and of
this checkout (a user's walk found each one corrupting what the tables said):

- the operators of the current source (kgb/operators.py): a trial of an operator since
  removed is left out, and its row says how many were (`removed`). A job over a whole
  source drops it from its own summary when it runs again; an `ops=` job, or a job never
  run again, kept it in its table, counted beside today's operators;
- how each job's latest run ended: one that Ctrl-C interrupted (RunFinished.interrupted,
  the job run KILLED) or that logged no end (running now, or killed without a word) judged
  only some of its operators. Its row counts what was judged and says how many of how many
  (`interrupted: 12 of 210 operators judged`), rather than reading as a complete one. A job
  that finished no trial yet has a row too (`interrupted: 0 of 210 operators judged`), named
  by its trials table's header: a Ctrl-C during its first, long trials left it in no query;
- whether a job's model was a replay (`model=replay`): its calls answer from completions
  logged earlier and carry the recorded tokens, but nothing was paid for them, so they are
  not spend (shown apart, as replayed tokens);
- when each job's latest run was (JobFacts.latest_ms): the latest statement about an operator
  in a row is the trial of the job that ran last, not the trial that finished last. A job run
  again keeps the trials whose key still matches (not judged again, their end times old),
  and until session 49 another job's trial judged in between outranked them: a kernel file
  edited back to a wrong one, which the user's latest run judged wrong, still counted as
  correct.

A Scope that names no operators and no jobs counts every trial of the tables as it is:
what callers that have no store (tables built in tests) get.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from kgb.tracking.projections import REPLAYED
from kgb.tracking.summary import JobInfo


class End(StrEnum):
    """How a job's latest run ended, as its MLflow run's status says it; for a finished one
    that left operators unjudged, why (CUT_SHORT)."""

    FINISHED = "finished"
    INTERRUPTED = "interrupted"  # Ctrl-C: the trials it did not start or cut short are left to the next run
    UNFINISHED = "unfinished"  # no end logged: running now, or killed without a word (kill -9, a lost host)
    # finished, with trials that did not: cut short by the infrastructure (infra_error: a
    # provider down through its retries, a judge killed from outside) or by the job's budget,
    # which its next run retries; a trials table holds finished trials only
    CUT_SHORT = "trials cut short"


END_OF_STATUS = {"FINISHED": End.FINISHED, "KILLED": End.INTERRUPTED}  # else (RUNNING) unfinished


@dataclass(frozen=True)
class JobFacts:
    end: End = End.FINISHED
    # the operators its run set out to judge (RunStarted.specs of the job run's run_started.json,
    # its first run's): what is missing where the table has no finished trial of them
    planned: frozenset[str] = frozenset()
    replayed: bool = False  # model.provider=replay (REPLAYED): its tokens were recorded, not paid
    # its trials table's header: the row it counts in where it finished no trial; None where
    # not read (tables built in tests), and then its trials name that row
    info: JobInfo | None = None
    # when its latest run ended (ms, the job run's MLflow end_time); infinite while one runs,
    # which says what it judges now. 0 where not read (tables built in tests): then the
    # trials' own end times decide alone
    latest_ms: float = 0.0


def job_facts(status: str, provider: str, run_started: Callable[[], str | None],
              info: JobInfo | None = None, start_ms: int = 0, end_ms: int | None = None) -> JobFacts:
    """A job's facts from its run's status, its `model.provider` param, its trials table's
    header, its run_started.json's text (None where the run has none: then what is missing
    is not known, and the row is not marked) and its job run's start and end times. Read for a
    finished job too (one more file a job): its trials cut short are missing from its table as
    an interrupted job's are."""
    end = END_OF_STATUS.get(status, End.UNFINISHED)
    planned: frozenset[str] = frozenset()
    if (text := run_started()) is not None:
        planned = frozenset(json.loads(text).get("specs", {}))
    return JobFacts(end, planned, provider == REPLAYED, info, latest_run_ms(end, start_ms, end_ms))


def latest_run_ms(end: End, start_ms: int, end_ms: int | None) -> float:
    """When a job's latest run ended. A run resumed sets its job run RUNNING again and MLflow
    keeps the earlier run's end_time beside it, so a job that logged no end counts as the
    latest of all (a job killed without a word too: nothing tells it from one running)."""
    if end is End.UNFINISHED:
        return float("inf")
    return float(end_ms if end_ms is not None else start_ms)


FINISHED = JobFacts()


@dataclass(frozen=True)
class Scope:
    operators: frozenset[str] | None = None  # the current source's; None: every operator counts
    jobs: Mapping[str, JobFacts] = field(default_factory=dict)  # by job id; a job not named: finished, paid

    def counts(self, op: str) -> bool:
        """Whether the operator is in the current source."""
        return self.operators is None or op in self.operators

    def job(self, job: str) -> JobFacts:
        return self.jobs.get(job, FINISHED)


EVERYTHING = Scope()


def current(jobs: Mapping[str, JobFacts]) -> Scope:
    """The scope of this checkout: its operators and the store's jobs. A kgb installed
    without its operators/ folder (not an editable install) knows of no operator, and
    then leaves none out rather than every one."""
    from kgb.operators import discover

    return Scope(frozenset(discover()) or None, jobs)
