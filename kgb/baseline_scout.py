"""The baselines of a job's coming operators, timed while the GPU stands idle.

A chip's first job measures each bench case's baseline once (kgb.tracking.baselines), and
until session 70 each in the timing turn of the first trial that met the case: 35.8-40.1 s of
a first job's turns on an H100 (session 69). Meanwhile, in the job's first half minute, the
GPU stood idle some 18 s while the first trials' candidates compiled. The scout fills that
time: beside the trials, it asks the engine for the baselines of operators whose trials have
not begun, in the order the job will start them, a few operators to a judge
(kgb.evaluate.baselines_ahead), and the book gives them to those trials when they begin. The
judge takes only the GPU's idle time (kgb.evaluate.baseline_judge); once it finds the GPU busy
for IDLE_WAIT_S, the scout stops and the trials' own judges time what is left, as before.

Its measurements are the job's own events (BaselineMeasured with no trial), logged like a
trial's; none is logged after the run's end (`ending`, as for trials: kgb.run).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kgb.evaluate import EvalSettings
from kgb.evaluate.baselines_ahead import measure_ahead
from kgb.operators import Spec
from kgb.tracking.baselines import BaselineBook
from kgb.tracking.log import EventLog

# Operators per judge: each judge costs a process's start and its CUDA context's, about 0.6 s
# between one operator's turn and the next's where each had its own (an H100, session 70); and
# an operator asked for is not looked at again, though its trial may begin meanwhile (its judge
# then times its baselines too, and the book keeps the first logged).
PER_JUDGE = 8


@dataclass
class Scouted:
    """What the scout did: operators asked for, baselines the book took, and why it stopped."""

    operators: int = 0
    taken: int = 0
    stopped: str = ""


class BaselineScout:
    """A thread that times the baselines of `coming` (operators in the order their trials will
    begin) while `begun(op)` is false for them; `stop` ends it, killing a judge under way."""

    def __init__(self, coming: Sequence[Spec], settings: EvalSettings, book: BaselineBook, log: EventLog,
                 job: str, begun: Callable[[str], bool], ending: threading.Lock, run_ended: threading.Event):
        self.coming, self.settings, self.book, self.log, self.job = list(coming), settings, book, log, job
        self.begun, self.ending, self.run_ended = begun, ending, run_ended
        self.done = Scouted()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kgb-baseline-scout", daemon=True)

    def start(self) -> BaselineScout:
        self._thread.start()
        return self

    def stop(self, wait: bool = True) -> Scouted:
        """Stop (a judge under way is killed: what it logged so far is kept) and say what it did;
        without `wait`, as the thread stands now (Ctrl-C)."""
        self._stop.set()
        if wait:
            self._thread.join()
        return self.done

    def _run(self) -> None:
        try:
            self._scout()
        except Exception as exc:  # noqa: BLE001 - only a head start: the trials time what it leaves
            self.done.stopped = f"{type(exc).__name__}: {exc}"

    def _scout(self) -> None:
        left = list(self.coming)
        while True:
            if self._stop.is_set():
                self.done.stopped = "the job's trials ended"
                return
            asked = self._next(left)
            if not asked:
                self.done.stopped = "every coming operator's baselines were known"
                return
            ahead = measure_ahead(asked, self.settings, {spec.id: self.book.known(spec) for spec in asked},
                                  abort=self._stop)
            with self.ending:
                if self.run_ended.is_set():
                    return
                self.done.taken += self.book.record_ahead(self.log.append, self.job,
                                                          {spec.id: spec for spec in asked}, ahead)
            self.done.operators += len({m.op for m in ahead.measured})
            if self._stop.is_set():
                self.done.stopped = "the job's trials ended"  # its judge killed: what it measured is kept
                return
            if ahead.stopped:
                self.done.stopped = ahead.stopped
                return

    def _next(self, left: list[Spec]) -> list[Spec]:
        """The next PER_JUDGE operators of `left` whose trials have not begun and whose
        baselines the book lacks, taken off it (with those passed over)."""
        asked: list[Spec] = []
        while left and len(asked) < PER_JUDGE:
            spec = left.pop(0)
            known = self.book.known(spec)
            timed = [c.name for c in spec.cases
                     if c.tag in self.settings.time_cases and c.tag in self.settings.case_tags]
            if not self.begun(spec.id) and not all(name in known for name in timed):
                asked.append(spec)
        return asked


def say(done: Scouted) -> None:
    """One line on what the scout did, once the job's trials have ended."""
    if done.operators:
        print(f"kgb: {done.taken} baseline(s) of {done.operators} operator(s) timed ahead of their trials "
              f"while the GPU was idle; then {done.stopped}", file=sys.stderr)
