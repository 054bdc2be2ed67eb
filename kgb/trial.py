"""One trial: what a method is given, and the record it leaves.

A method receives a `TrialContext`. Its capabilities log themselves: `evaluate` writes
CandidateProposed and CandidateEvaluated, the model wrapper writes ModelCalled. Method
code therefore contains no logging and can neither forget nor forge a record.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

from kgb.evaluate import EvalSettings, JudgeKilled, Verdict, evaluate
from kgb.operators import Problem, Spec
from kgb.tracking.baselines import BaselineBook
from kgb.tracking.blobs import BlobStore
from kgb.tracking.events import (
    CandidateEvaluated,
    CandidateProposed,
    Event,
    TrialEnd,
    TrialFinished,
    TrialStarted,
)
from kgb.tracking.log import EventLog

# Errors of the machine rather than of anything a method or candidate did.
MACHINE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.ENOMEM})


class InfrastructureFailure(Exception):
    """The machine failed, not the method or its candidate: the trial ends as
    TrialEnd.INFRA_ERROR, which is no result, and a re-run retries it."""


def machine_error(error: BaseException) -> bool:
    """Whether an exception is the machine's failure (a full disk, an I/O error)."""
    return isinstance(error, OSError) and error.errno in MACHINE_ERRNOS


@dataclass(frozen=True)
class Evaluation:
    """A candidate and its verdict, as a method sees them."""

    candidate: str
    source: str
    verdict: Verdict


class BudgetExhausted(Exception):
    """Raised by the model wrapper when a trial or job budget is reached."""


@dataclass
class TrialContext:
    """What a method may use during one trial."""

    problem: Problem
    spec: Spec = field(repr=False)
    settings: EvalSettings
    log: EventLog = field(repr=False)
    blobs: BlobStore = field(repr=False)
    job: str
    key: str
    sample: int
    model: Any = None  # kgb.models.TrialModel (model.for_trial(ctx)) where the method calls an LLM
    prior: list[Event] = field(default_factory=list)  # events of earlier, unfinished attempts
    proposed: int = 0  # candidates proposed so far in this attempt
    baselines: BaselineBook | None = None  # the chip's known speed baselines (timed jobs only)

    def emit(self, event: Event) -> Event:
        """Append a trial event (used by the context's capabilities, not by methods)."""
        return self.log.append(dataclasses.replace(event, job=self.job, trial=self.key))

    def evaluate(self, source: str, parents: tuple[str, ...] = (), origin: str = "") -> Evaluation:
        """Propose `source` as a candidate and judge it; both facts are logged.

        A resumed trial that proposes again what an earlier attempt proposed at the same
        position gets the logged verdict back: the log holds each candidate once."""
        self.proposed += 1
        candidate = f"c{self.proposed}-{hashlib.sha256(source.encode()).hexdigest()[:8]}"
        judged = [e for e in self.prior if isinstance(e, CandidateEvaluated) and e.candidate == candidate]
        if judged:
            logs = self.blobs.get(judged[0].logs_blob) if judged[0].logs_blob else ""
            return Evaluation(candidate, source, dataclasses.replace(judged[0].verdict, logs=logs))
        if not any(isinstance(e, CandidateProposed) and e.candidate == candidate for e in self.prior):
            self.emit(
                CandidateProposed(
                    job=self.job, candidate=candidate, source_blob=self.blobs.put(source),
                    parents=parents, origin=origin,
                )
            )
        verdict = self._judge(source)
        logs_blob = self.blobs.put(verdict.logs) if verdict.logs else None
        self.emit(
            CandidateEvaluated(
                job=self.job, candidate=candidate,
                verdict=dataclasses.replace(verdict, logs=""), logs_blob=logs_blob,
            )
        )
        return Evaluation(candidate, source, verdict)

    def _judge(self, source: str) -> Verdict:
        """The judge's verdict, or InfrastructureFailure where the machine, not the candidate,
        failed: no CandidateEvaluated is logged then, so a re-run judges the candidate again.
        `evaluate` never raises for a faulty candidate, so whatever it raises (its engine
        died, the disk is full) is the infrastructure's failure."""
        try:
            # Concurrent trials may judge at once: the judge times one candidate at a time
            # per GPU (a lock file) and lets checks overlap.
            known = self.baselines.known(self.spec) if self.baselines else None
            verdict = evaluate(source, self.spec, self.settings, baselines=known)
        except JudgeKilled as e:
            raise InfrastructureFailure(str(e)) from e
        except Exception as e:  # noqa: BLE001 - see the docstring
            raise InfrastructureFailure(f"the judge could not run: {type(e).__name__}: {e}") from e
        if self.baselines is not None:
            verdict = self.baselines.record(self.emit, self.job, self.spec, verdict)
        return verdict

    def known_solution(self) -> str:
        """The operator's solution.py. Only the `expert` method may call this."""
        return self.spec.solution_path.read_text()


def start(log: EventLog, job: str, key: str, spec: Spec, sample: int, attempt: int) -> float:
    log.append(TrialStarted(job=job, trial=key, op=spec.id, spec_version=spec.version, sample=sample, attempt=attempt))
    return time.perf_counter()


def attempts_s(prior: list) -> float:
    """The seconds a trial's earlier attempts ran, each from its TrialStarted to its last event:
    a trial resumed after a Ctrl-C (an agent's, up to its wall clock) has its TrialFinished.wall_s
    count them, not only its last attempt's (session 49's user walk: 0.0 s for a trial judged
    3.5 s in its first attempt)."""
    spans: list[list[float]] = []  # [start, last event] of each attempt
    for event in prior:
        if isinstance(event, TrialStarted):
            spans.append([event.ts, event.ts])
        elif spans:
            spans[-1][1] = event.ts
    return sum(max(last - began, 0.0) for began, last in spans)


def finish(log: EventLog, job: str, key: str, end: TrialEnd, reason: str, started: float) -> None:
    log.append(TrialFinished(job=job, trial=key, end=end, reason=reason, wall_s=time.perf_counter() - started))
