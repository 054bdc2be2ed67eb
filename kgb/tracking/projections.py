"""Pure folds of events into views: a trial's outcome and a job's aggregates.

Scores are derived here, never logged: a new metric needs no re-run, only a new fold.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from kgb.evaluate.verdict import Status, Verdict, geomean
from kgb.tracking.events import (
    CandidateEvaluated,
    CandidateProposed,
    CompletionParsed,
    Event,
    ModelCalled,
    RunStarted,
    TrialEnd,
    TrialFinished,
    TrialStarted,
)
from kgb.tracking.summary import reports_speed
from kgb.usage import Usage

FAST_THRESHOLDS = (0.8, 1.0, 1.5)
# The replay provider's name (kgb.models.replay.ReplayProvider.name; not imported, as it imports
# this module), which each of its ModelCalled events carries: such a call answered from a
# completion logged earlier and carries the recorded call's tokens, but nothing was paid for it.
# The figures of spend (tokens, cost) leave it out and count it apart as replayed, as the
# queries do (kgb.query.scope, by the job's model.provider: a replay job's calls are all replayed).
REPLAYED = "replay"

# Best first: the status a trial reports is that of its best candidate.
STATUS_RANK = [
    Status.CORRECT, Status.WRONG_OUTPUT, Status.RUNTIME_ERROR, Status.TIMEOUT,
    Status.COMPILE_ERROR, Status.REJECTED,
]


def verdict_rank(v: Verdict) -> tuple[int, float]:
    """How good a verdict is, higher better: its status (STATUS_RANK), then its speedup."""
    return (-STATUS_RANK.index(v.status), v.speedup or 0.0)


class TrialStatus(StrEnum):
    """A trial's status: its best verdict's, or why it has none."""

    CORRECT = "correct"
    WRONG_OUTPUT = "wrong_output"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    COMPILE_ERROR = "compile_error"
    REJECTED = "rejected"
    NO_CANDIDATE = "no_candidate"
    METHOD_ERROR = "method_error"  # the method itself raised before proposing anything
    INFRA_ERROR = "infra_error"  # the infrastructure failed; not a result: a re-run retries it
    SKIPPED = "skipped"
    UNFINISHED = "unfinished"


@dataclass
class Candidate:
    id: str
    source_blob: str
    origin: str
    parents: tuple[str, ...]
    verdict: Verdict | None = None
    logs_blob: str | None = None
    round: int | None = None  # the method's round that produced it (CompletionParsed.round)


@dataclass
class TrialOutcome:
    """Everything known about one trial, folded from its events."""

    key: str
    op: str = ""
    sample: int = 0
    spec_version: int = 0
    attempts: int = 0
    candidates: list[Candidate] = field(default_factory=list)
    calls: list[ModelCalled] = field(default_factory=list)
    parses: list[CompletionParsed] = field(default_factory=list)  # one per completion, resumes deduped
    end: TrialEnd | None = None
    reason: str = ""
    wall_s: float = 0.0
    events: list[Event] = field(default_factory=list)
    # (events folded, best candidate then): `best` is asked for many times per trial
    _best: tuple[int, Candidate | None] = field(default=(-1, None), repr=False, compare=False)

    @property
    def finished(self) -> bool:
        """Whether the trial has its result; one cut short by the infrastructure has none."""
        return self.end is not None and self.end != TrialEnd.INFRA_ERROR

    @property
    def started_at(self) -> float:
        """Unix time of the trial's first start (a resumed trial started earlier too)."""
        starts = [e.ts for e in self.events if isinstance(e, TrialStarted)]
        return min(starts) if starts else (self.events[0].ts if self.events else 0.0)

    @property
    def finished_at(self) -> float:
        """Unix time of its TrialFinished (of its last event while unfinished)."""
        ends = [e.ts for e in self.events if isinstance(e, TrialFinished)]
        return max(ends) if ends else (self.events[-1].ts if self.events else 0.0)

    @property
    def usage(self) -> Usage:
        """What its model calls spent: every call but a replayed one (`replayed`)."""
        return sum((c.usage for c in self.calls if paid(c)), Usage())

    @property
    def replayed(self) -> Usage:
        """The tokens its replayed calls carry, recorded by the run they were answered from."""
        return replayed_usage([c for c in self.calls if not paid(c)])

    @property
    def best(self) -> Candidate | None:
        """The fastest correct candidate; else the one with the best status, latest first."""
        if self._best[0] == len(self.events):
            return self._best[1]
        judged = [(i, c) for i, c in enumerate(self.candidates) if c.verdict is not None]
        if not judged:
            self._best = (len(self.events), None)
            return None

        def rank(item: tuple[int, Candidate]) -> tuple[int, float, int]:
            i, c = item
            assert c.verdict is not None
            return (*verdict_rank(c.verdict), i)

        best = max(judged, key=rank)[1]
        self._best = (len(self.events), best)
        return best

    @property
    def status(self) -> TrialStatus:
        if self.end == TrialEnd.SKIPPED:
            return TrialStatus.SKIPPED
        if self.end == TrialEnd.INFRA_ERROR:  # its candidates' verdicts are not its result
            return TrialStatus.INFRA_ERROR
        best = self.best
        if best is not None and best.verdict is not None:
            return TrialStatus(best.verdict.status.value)
        if self.end == TrialEnd.METHOD_ERROR:
            return TrialStatus.METHOD_ERROR
        return TrialStatus.NO_CANDIDATE if self.finished else TrialStatus.UNFINISHED

    @property
    def correct(self) -> bool:
        return self.status == TrialStatus.CORRECT

    @property
    def why(self) -> str:
        """Why the trial is not correct ("" when it is): the trial's own reason (skipped,
        no candidate, method error...), else its best verdict's message."""
        if self.correct:
            return ""
        best = self.best
        message = best.verdict.message if best is not None and best.verdict is not None else ""
        return self.reason or message or f"{self.status.value} (no message was recorded)"

    @property
    def speedup(self) -> float | None:
        best = self.best
        return best.verdict.speedup if best and best.verdict and self.correct else None

    @property
    def rounds(self) -> int:
        """Rounds of an LLM method that produced a completion (0 for other methods)."""
        return max((p.round for p in self.parses), default=0)

    @property
    def first_correct_round(self) -> int | None:
        """The round of the first correct candidate: pass@r holds for every r from it on."""
        rounds = [c.round for c in self.candidates if c.round is not None and c.verdict is not None and c.verdict.correct]
        return min(rounds) if rounds else None


def paid(call: ModelCalled) -> bool:
    """Whether the call was paid for by the run that logged it: not a replay (REPLAYED)."""
    return call.provider != REPLAYED


def replayed_usage(calls: list[ModelCalled]) -> Usage:
    """The tokens replayed calls carry, at no cost: whatever price the replay's config gave,
    this run paid nothing for them."""
    return dataclasses.replace(sum((c.usage for c in calls), Usage()), cost_usd=0.0)


class TrialFold:
    """The trial outcomes of one job's log, folded incrementally: `add` takes each new
    event once, so a job that projects after every trial never re-folds its whole log."""

    def __init__(self) -> None:
        self.trials: dict[str, TrialOutcome] = {}  # first-seen order
        self._pending: dict[str, int | None] = {}  # trial -> round of a parse whose candidate comes next
        self._run: frozenset[str] | None = None  # the latest RunStarted's trial keys (None: unrecorded)

    def add(self, e: Event) -> TrialOutcome | None:
        """Fold one event; return the outcome it belongs to (None for job events)."""
        if e.trial is None:
            if isinstance(e, RunStarted):
                self._run = frozenset(e.trial_keys) or None
            return None
        t = self.trials.get(e.trial)
        if t is None:
            t = self.trials[e.trial] = TrialOutcome(key=e.trial)
        t.events.append(e)
        if isinstance(e, TrialStarted):
            t.op, t.sample, t.spec_version = e.op, e.sample, e.spec_version
            t.attempts += 1
        elif isinstance(e, CompletionParsed):
            # a resumed attempt parses again the completions an earlier one parsed
            if not any((p.request_hash, p.round) == (e.request_hash, e.round) for p in t.parses):
                t.parses.append(e)
            self._pending[e.trial] = e.round if e.outcome.usable else None
        elif isinstance(e, CandidateProposed):
            t.candidates.append(Candidate(e.candidate, e.source_blob, e.origin, e.parents, round=self._pending.pop(e.trial, None)))
        elif isinstance(e, CandidateEvaluated):
            for c in t.candidates:
                if c.id == e.candidate and c.verdict is None:
                    c.verdict, c.logs_blob = e.verdict, e.logs_blob
        elif isinstance(e, ModelCalled):
            t.calls.append(e)
        elif isinstance(e, TrialFinished):
            t.end, t.reason, t.wall_s = e.end, e.reason, t.wall_s + e.wall_s
        return t

    def current(self) -> list[TrialOutcome]:
        """The trials of the job's latest run, what its summary counts: a job's log also holds
        trials of operators since removed from its source, of an edited file (`method=files`),
        of samples beyond today's count. Every trial, in logs that do not name them."""
        if self._run is None:
            return list(self.trials.values())
        return [t for t in self.trials.values() if t.key in self._run]


def trial_outcomes(events: Iterable[Event]) -> dict[str, TrialOutcome]:
    """Fold a job's events into one outcome per trial key, in first-seen order."""
    fold = TrialFold()
    for e in events:
        fold.add(e)
    return fold.trials


def judged(events: Iterable[Event]) -> list[tuple[str, Verdict]]:
    """Each judged candidate's (operator, verdict), trial by trial: what the tables of
    operators/ and the benchmarks that compare jobs read from a job's log."""
    return [(t.op, c.verdict) for t in trial_outcomes(events).values() for c in t.candidates if c.verdict is not None]


@dataclass(frozen=True)
class JobSummary:
    """A job's aggregate metrics (the published definitions: docs/operators.md)."""

    trials: int  # finished trials that ran here (skipped ones excluded)
    skipped: int
    correct: int
    accuracy: float | None  # None where nothing ran (every trial skipped)
    fast: dict[float, float]  # p -> share of trials correct and faster than p x baseline; empty where nothing was timed
    geomean_speedup: float | None  # over correct, timed trials
    usage: Usage  # of every trial's model calls, finished or not, but replayed ones: what they cost
    tokens_per_success: float | None
    # the trials' seconds summed: the job's work, more than the time it took where trials ran
    # at once (until session 44 logged as the job's wall_s; that is RunFinished's, summed over
    # its runs: kgb.tracking.mlflow_projection)
    trial_s: float
    pass_at: dict[int, float] = field(default_factory=dict)  # r -> share of operators correct within r rounds
    extractions: dict[str, int] = field(default_factory=dict)  # Extraction outcome -> completions
    # the tokens of replayed calls (model=replay): recorded by the run they answer from, not paid
    # here, so not in `usage`; cost 0
    replayed: Usage = field(default_factory=Usage)

    @property
    def replayed_note(self) -> str:
        """The line that says what a replay's tokens are, for the closing summary; "" where
        no call was replayed."""
        if not self.replayed.total_tokens:
            return ""
        return (f"replayed tokens {self.replayed.total_tokens} (not in tokens or cost): a replay model's calls "
                "(model=replay) answer from completions logged earlier, for free: their recorded tokens are not spend")

    def metrics(self) -> dict[str, float]:
        """Flat numeric metrics for MLflow (absent values are left out, not -1)."""
        m: dict[str, float] = {
            "trials": self.trials, "skipped": self.skipped, "correct_ops": self.correct,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "cache_read_tokens": self.usage.cache_read_tokens,
            "cache_write_tokens": self.usage.cache_write_tokens,
            "reasoning_tokens": self.usage.reasoning_tokens,
            "total_tokens": self.usage.total_tokens, "cost_usd": self.usage.cost_usd,
            "trial_s": self.trial_s,
        }
        if self.accuracy is not None:
            m["accuracy"] = self.accuracy
        for p, share in self.fast.items():
            m[f"fast_{p}"] = share
        if self.geomean_speedup is not None:
            m["geomean_speedup"] = self.geomean_speedup
        if self.tokens_per_success is not None:
            m["tokens_per_success"] = self.tokens_per_success
        for r, share in self.pass_at.items():
            m[f"pass_at_{r}"] = share
        for outcome, count in self.extractions.items():
            m[f"completions_{outcome}"] = count
        if self.replayed.total_tokens:  # only a job that replayed calls has it
            m["replayed_tokens"] = self.replayed.total_tokens
        return m


def summarize(outcomes: list[TrialOutcome], settings: str = "") -> JobSummary:
    """Aggregate finished trials (their usage: every trial's, kgb.run passes those of the
    job's latest run; a replayed call's tokens apart, `replayed`, not spend). With several
    samples of one operator, the operator counts once and is correct if any sample is (pass@k). `settings`: the job's
    RunStarted.settings, which says whether it timed its cases (`reports_speed`)."""
    finished = [t for t in outcomes if t.finished]
    ran = [t for t in finished if t.status != TrialStatus.SKIPPED]
    by_op: dict[str, list[TrialOutcome]] = defaultdict(list)
    for t in ran:
        by_op[t.op].append(t)
    n = len(by_op)
    correct_ops = {op: ts for op, ts in by_op.items() if any(t.correct for t in ts)}
    speedups = {op: max((t.speedup or 0.0) for t in ts) for op, ts in correct_ops.items()}
    timed = [s for s in speedups.values() if s > 0]
    # What the trials' model calls cost, a trial the job's budget stopped (unfinished) included:
    # it was paid. Summed with fsum, so that the same calls make the same figure in whatever
    # order they are added (kgb.trials.budget_note adds them in the log's order).
    # A replayed call was paid by the run it was recorded in, not by this one.
    calls = [c.usage for t in outcomes for c in t.calls if paid(c)]
    usage = dataclasses.replace(sum(calls, Usage()), cost_usd=math.fsum(u.cost_usd for u in calls))
    rounds = max((t.rounds for t in ran), default=0)
    first = {op: min((t.first_correct_round or rounds + 1 for t in ts), default=rounds + 1) for op, ts in by_op.items()}
    extractions: dict[str, int] = defaultdict(int)
    for t in ran:
        for p in t.parses:
            extractions[p.outcome.value] += 1
    return JobSummary(
        trials=n,
        skipped=len({t.op for t in finished} - set(by_op)),
        correct=len(correct_ops),
        accuracy=len(correct_ops) / n if n else None,
        fast={p: sum(1 for s in speedups.values() if s > p) / n for p in FAST_THRESHOLDS}
        if n and reports_speed(settings, timed) else {},
        geomean_speedup=geomean(timed) if timed else None,
        usage=usage,
        tokens_per_success=usage.total_tokens / len(correct_ops) if correct_ops else None,
        trial_s=sum(t.wall_s for t in finished),
        pass_at={r: sum(1 for f in first.values() if f <= r) / n for r in range(1, rounds + 1)} if n else {},
        extractions=dict(sorted(extractions.items())),
        replayed=replayed_usage([c for t in outcomes for c in t.calls if not paid(c)]),
    )


def run_started(events: Iterable[Event]) -> RunStarted | None:
    """The latest RunStarted of a job's log (a resumed job has several)."""
    starts = [e for e in events if isinstance(e, RunStarted)]
    return starts[-1] if starts else None
