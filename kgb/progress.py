"""What a job prints: one line per finished trial with an estimate, and a closing table."""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TextIO

from kgb.tracking.projections import JobSummary, TrialOutcome

WHY_CHARS = 160  # of a failed verdict's first line, on the trial's progress line


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def _speed(t: TrialOutcome) -> str:
    return f"{t.speedup:.2f}x" if t.speedup else ""


class Progress:
    """Prints `[n/N] op status speedup  elapsed ... eta ...` as trials finish.

    The estimate: trials start longest first (kgb.trial_order), so the mean seconds of those
    finished first overstated the rest many times over (a 210-operator CPU job's first line
    said `eta 0:22:05`; it took 1:42). Where `expected` (operators/judging_seconds.json for
    the device) knows the operators left, the estimate is their expected seconds, scaled by
    how long this run's finished trials took against theirs, over the `width` trials that run
    at once; an operator it does not know counts the mean trial's seconds."""

    def __init__(self, total: int, title: str, out: TextIO = sys.stdout, *, todo: Iterable[str] = (),
                 expected: Mapping[str, float] | None = None, width: int = 1,
                 clock: Callable[[], float] = time.perf_counter):
        self.total, self.done, self.ran = total, 0, 0
        self.out = out
        self.clock = clock
        self.started = clock()
        self.expected = dict(expected or {})
        self.width = max(1, width)
        self._left = Counter(todo)  # the operators of this run's trials not finished yet
        self._took: list[tuple[str, float]] = []  # (operator, seconds) of this run's finished trials
        self._lock = threading.Lock()
        print(f"{title}: {total} trial(s)", file=out, flush=True)

    def skipped_as_done(self, n: int) -> None:
        """Trials already finished by an earlier run of this job."""
        if n:
            self.done += n
            print(f"  {n} trial(s) already finished in this job's log: not run again", file=self.out, flush=True)

    def finished(self, t: TrialOutcome) -> None:
        with self._lock:
            self.done += 1
            self.ran += 1
            elapsed = self.clock() - self.started
            if self._left[t.op] > 0:
                self._left[t.op] -= 1
            self._took.append((t.op, t.wall_s))
            eta = self.eta(elapsed)
            width = len(str(self.total))
            note = _why(t)
            print(
                f"  [{self.done:>{width}}/{self.total}] {t.op:<34} {t.status.value:<13} {_speed(t):>7}"
                f"  {t.wall_s:6.1f}s | elapsed {_clock(elapsed)} eta {_clock(eta)}  {note}".rstrip(),
                file=self.out,
                flush=True,
            )

    def eta(self, elapsed: float) -> float:
        """Seconds until the job ends: the expected seconds of the trials left where the table
        knows them (see the class), else the mean seconds per finished trial so far."""
        left = self.total - self.done
        known = [(self.expected[op], took) for op, took in self._took if self.expected.get(op)]
        # no finished trial the table knows (nothing to scale it by), or no list of the trials left
        if not known or self._left.total() != left:
            return elapsed / self.ran * left
        scale = sum(took for _, took in known) / sum(e for e, _ in known)  # this run's pace against the table's
        mean = sum(took for _, took in self._took) / len(self._took)  # one trial's seconds, for an unknown operator
        work = sum(n * (scale * self.expected[op] if op in self.expected else mean) for op, n in self._left.items())
        # trials run `width` at once, fewer once fewer are left
        return work / max(1, min(self.width, sum(self._left.values())))


def _why(t: TrialOutcome) -> str:
    """Why a trial is not correct, in a line: its end's reason, or its best candidate's verdict
    (`rejected: does not import triton`), which a newcomer otherwise had to look up in MLflow."""
    if t.status.value in ("skipped", "no_candidate", "method_error", "infra_error"):
        return t.reason
    verdict = t.best.verdict if t.best else None
    if t.correct or verdict is None or not verdict.message:
        return ""
    line = verdict.message.strip().splitlines()[0] if verdict.message.strip() else ""
    return line if len(line) <= WHY_CHARS else line[:WHY_CHARS - 3] + "..."


def summary_table(outcomes: list[TrialOutcome], summary: JobSummary, out: TextIO = sys.stdout) -> None:
    """One row per trial and a closing line. Columns of timings appear only where
    something was timed: on the CPU they would all be empty, so they are left out."""
    timed = any(t.speedup for t in outcomes)
    header = f"{'operator':<34} {'status':<13}"
    print(f"\n{header} {'speedup':>8} {'latency_us':>11} {'baseline_us':>12}" if timed else f"\n{header.rstrip()}", file=out)
    samples = len({t.sample for t in outcomes}) > 1  # method.samples=N: each row names its sample
    for t in sorted(outcomes, key=lambda t: (t.op, t.sample)):
        name = f"{t.op} #{t.sample}" if samples else t.op
        row = f"{name:<34} {t.status.value:<13}"
        v = t.best.verdict if t.best else None
        if timed:
            lat = f"{v.latency_us:.1f}" if v and v.latency_us and t.correct else ""
            base = f"{v.baseline_us:.1f}" if v and v.baseline_us and t.correct else ""
            row += f" {_speed(t):>8} {lat:>11} {base:>12}"
        print(row.rstrip(), file=out)
    judged = [t for t in outcomes if t.best and t.best.verdict]
    if summary.fast:  # the job timed its cases (tracking.summary.reports_speed)
        geomean = f"  geomean speedup {summary.geomean_speedup:.2f}x" if summary.geomean_speedup else ""
        speed = f"fast_1.0 {summary.fast[1.0]:.3f}{geomean}  "
    elif judged and all(t.best.verdict.device == "cpu" for t in judged):
        speed = "speed not timed on CPU  "
    else:
        speed = "speed: nothing timed  "
    accuracy = f"{summary.accuracy:.3f}" if summary.accuracy is not None else "-"
    print(
        f"\ncorrect {summary.correct}/{summary.trials}  accuracy {accuracy}  {speed}"
        f"skipped {summary.skipped}  tokens {summary.usage.total_tokens}  cost ${summary.usage.cost_usd:.4f}",
        file=out,
        flush=True,
    )
    skips = sorted({t.reason for t in outcomes if t.status.value == "skipped" and t.reason})
    if skips and not summary.trials:  # nothing ran: say why once, not only on the progress lines
        print(f"nothing was judged: {'; '.join(skips)[:500]}", file=out, flush=True)
    retry = sum(1 for t in outcomes if t.status.value == "infra_error")
    if retry:
        print(f"{retry} trial(s) hit an infrastructure failure and have no result: run the same command "
              "again to retry them", file=out, flush=True)
