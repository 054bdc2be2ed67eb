"""Speed baselines, measured once per chip and operator case, kept as events.

A candidate's speedup is the baseline's time over its own. Timed again for every candidate,
the baseline would add its own noise to every speedup, and candidates of one operator (an
agent's fifty attempts, two methods of a sweep) would each be measured against a different
draw of it. So the first evaluation of a case on a chip measures it and the trial logs a
`BaselineMeasured` event; every later evaluation on the same chip (same device, torch,
Triton, judge and timing settings: the fingerprint) is given that figure, and each timed
case names the event its baseline came from (`CaseResult.baseline_from`). The book is a
projection of the event logs under the tracking root: a job started later, or resumed,
reads what earlier jobs measured.

A chip's first job also times baselines ahead of their trials, in the GPU's idle time
(kgb.baseline_scout): those are the job's own events, no trial's (`record_ahead`).

Every measurement is logged, and the book gives out the first one whose timing turn had the
GPU to itself. A baseline timed while another evaluation's work ran on the GPU past the turn's
wait for it (`Turn.CROWDED`: a candidate hanging in its check) reads slow, and given to every
later trial it would inflate every method's speedup on that case; it stays the figure of the
verdict that measured it, which says so, and the next evaluation measures again. Concurrent
evaluations of one operator may each measure a case the book did not know when they started:
the later ones to finish take the book's figure, so that one case's speedups share one
baseline, and their own measurements stay in the log.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from kgb.evaluate import Verdict
from kgb.evaluate.baselines_ahead import Ahead
from kgb.evaluate.verdict import Turn
from kgb.operators import Spec
from kgb.tracking.events import BaselineMeasured, Event
from kgb.tracking.log import read_events


def fingerprint(device: str, settings: str, packages: dict[str, str]) -> str:
    """What a baseline's time depends on besides the operator case: the device, the judge's
    timing settings and the libraries that run the baseline."""
    parts = {"device": device, "settings": settings,
             **{k: v for k, v in packages.items() if k in ("torch", "triton", "nvidia-cublas-cu12", "nvidia-cublas")}}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Baseline:
    latency_us: float
    name: str  # which baseline ("torch", "libcublas")
    ref: str  # the BaselineMeasured event: "<job>#<seq>"


class BaselineBook:
    """The baselines known for one fingerprint; shared by a job's concurrent trials."""

    def __init__(self, fingerprint: str):
        self.fingerprint = fingerprint
        self._known: dict[tuple[str, int, str], Baseline] = {}
        self._lock = threading.Lock()

    def load(self, events: Iterable[Event]) -> BaselineBook:
        for e in events:
            if isinstance(e, BaselineMeasured) and e.fingerprint == self.fingerprint and e.turn is not Turn.CROWDED:
                self._known.setdefault((e.op, e.spec_version, e.case), Baseline(e.latency_us, e.baseline, f"{e.job}#{e.seq}"))
        return self

    def known(self, spec: Spec) -> dict[str, float]:
        """The cases of `spec` whose baseline is known, with its time in microseconds."""
        with self._lock:
            return {case: b.latency_us for (op, version, case), b in self._known.items()
                    if op == spec.id and version == spec.version}

    def record(self, emit: Callable[[Event], Event], job: str, spec: Spec, verdict: Verdict) -> Verdict:
        """Log the baselines this verdict measured, and return the verdict with each timed case
        naming the event its baseline came from: the book's, where it knows one by now."""
        cases = []
        for c in verdict.cases:
            if c.baseline_us is None:
                cases.append(c)
                continue
            key = (spec.id, spec.version, c.name)
            with self._lock:
                known, mine = self._known.get(key), None
                if c.baseline_mode is not None or known is None:  # measured by this verdict's judge, not given
                    mine, known = self._logged(emit, job, spec, c.name, verdict.baseline or "", c.baseline_us,
                                               c.baseline_mode or "", c.baseline_turn)
            if known is None or known is mine:  # its own: the book's first, or crowded
                assert mine is not None
                cases.append(dataclasses.replace(c, baseline_from=mine.ref))
            else:  # given, or measured beside another evaluation that logged it first
                cases.append(dataclasses.replace(c, baseline_us=known.latency_us, baseline_from=known.ref,
                                                 baseline_mode=None, baseline_turn=None))
        return dataclasses.replace(verdict, cases=tuple(cases))

    def record_ahead(self, emit: Callable[[Event], Event], job: str, specs: dict[str, Spec], ahead: Ahead) -> int:
        """Log the baselines a judge timed ahead of their trials (kgb.baseline_scout), as job
        events, and know them from now on; how many the book took (a crowded one, or one a
        trial's judge logged first, stays in the log only). `specs`: the operators asked for."""
        taken = 0
        for m in ahead.measured:
            with self._lock:
                mine, known = self._logged(emit, job, specs[m.op], m.case, m.baseline, m.latency_us, m.mode, m.turn)
            taken += known is mine
        return taken

    def _logged(self, emit: Callable[[Event], Event], job: str, spec: Spec, case: str, baseline: str,
                latency_us: float, mode: str, turn: Turn | None) -> tuple[Baseline, Baseline | None]:
        """One measurement logged, under the book's lock: the figure it is, and the book's for its
        case now (its own where it is the first not crowded; None where none is known)."""
        event = emit(BaselineMeasured(job=job, op=spec.id, spec_version=spec.version, case=case, baseline=baseline,
                                      latency_us=latency_us, fingerprint=self.fingerprint, timing_mode=mode, turn=turn))
        mine = Baseline(latency_us, baseline, f"{event.job}#{event.seq}")
        key = (spec.id, spec.version, case)
        return mine, self._known.get(key) if turn is Turn.CROWDED else self._known.setdefault(key, mine)


def load_book(root: Path, fingerprint: str) -> BaselineBook:
    """The book of every job's baselines under the tracking root, for this fingerprint."""
    book = BaselineBook(fingerprint)
    for path in sorted((root / "jobs").glob("*/events.jsonl")):
        book.load(e for e in read_events(path) if isinstance(e, BaselineMeasured))
    return book
