"""What a job prints: one line per finished trial with an estimate, a heartbeat while
trials run long, and a closing table."""

from __future__ import annotations

import contextlib
import math
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TextIO

from kgb.config import ProgressConfig
from kgb.evaluate.verdict import Verdict
from kgb.tracking.events import (
    CandidateChecked,
    CandidateEvaluated,
    Event,
    ModelCalled,
    SessionStarted,
    TurnTaken,
)
from kgb.tracking.projections import JobSummary, TrialOutcome, verdict_rank

WHY_CHARS = 160  # of a failed verdict's first line, on the trial's progress line

# The heartbeat: once trials run and the job printed no line for `progress.heartbeat_s`, a line
# says how many run and how far the HEARTBEAT_TRIALS longest-running of them got, and again
# after each such spell without a line. An agent's trial runs up to method.agent.wall_s (1800 s
# by default): a sweep of them printed its title, then nothing for half an hour (a user's walk).
# A job whose trials end every few seconds (the CPU sweep, the GPU sweep) never prints one; a
# long sweep's user may want one every few minutes rather than each minute, or none (0).
HEARTBEAT_S = ProgressConfig().heartbeat_s  # where a caller sets none (the job passes its own)
HEARTBEAT_TRIALS = 3
IDLE_S = 60.0  # a running trial that logged nothing for this long says for how long


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
    at once; an operator it does not know counts the mean trial's seconds.

    While trials run (`began` to `finished`) and no line was printed for `heartbeat_s`
    (progress.heartbeat_s; 0: never), `beat` prints the heartbeat (see HEARTBEAT_S); `beating`
    calls it from a thread of its own for as long as the trials run. What a trial did so far
    is read from its events in the job's log (`events_of`, by trial key): methods print
    nothing themselves. An agent method's budgets (`limits`: method.agent, kgb.agents.config.AgentConfig) say
    what its wall clock, turns and checks are out of. Every line is a whole line, on a
    terminal or not (CI logs, SLURM's files)."""

    def __init__(self, total: int, title: str, out: TextIO | None = None, *, todo: Iterable[str] = (),
                 expected: Mapping[str, float] | None = None, width: int = 1,
                 clock: Callable[[], float] = time.perf_counter, heartbeat_s: float = HEARTBEAT_S,
                 events_of: Callable[[str], Sequence[Event]] | None = None, wall: Callable[[], float] = time.time,
                 limits: Any = None):
        self.total, self.done, self.ran = total, 0, 0
        self.out = out if out is not None else sys.stdout  # sys.stdout as it is now, not at import
        self.clock = clock
        self.started = clock()
        self.expected = dict(expected or {})
        self.width = max(1, width)
        self.heartbeat_s = heartbeat_s
        self.events_of = events_of or (lambda key: ())
        self.wall = wall  # the clock of the events' `ts`
        self.limits = limits
        self._left = Counter(todo)  # the operators of this run's trials not finished yet
        self._took: list[tuple[str, float]] = []  # (operator, seconds) of this run's finished trials
        self._running: dict[str, tuple[str, float]] = {}  # trial key -> (its name, when it began)
        self._lock = threading.Lock()
        self._print(f"{title}: {total} trial(s)")

    def _print(self, text: str) -> None:
        """Print whole lines at once, and note when (the heartbeat waits for a quiet spell)."""
        print(text, file=self.out, flush=True)
        self._last_line = self.clock()

    def skipped_as_done(self, n: int) -> None:
        """Trials already finished by an earlier run of this job."""
        if n:
            self.done += n
            self._print(f"  {n} trial(s) already finished in this job's log: not run again")

    def began(self, key: str, name: str) -> None:
        """A trial of this run started; `name` is what the heartbeat calls it."""
        with self._lock:
            self._running[key] = (name, self.clock())

    def finished(self, t: TrialOutcome) -> None:
        with self._lock:
            self._running.pop(t.key, None)
            self.done += 1
            self.ran += 1
            elapsed = self.clock() - self.started
            if self._left[t.op] > 0:
                self._left[t.op] -= 1
            self._took.append((t.op, t.wall_s))
            eta = self.eta(elapsed)
            width = len(str(self.total))
            note = _why(t)
            self._print(
                f"  [{self.done:>{width}}/{self.total}] {t.op:<34} {t.status.value:<13} {_speed(t):>7}"
                f"  {t.wall_s:6.1f}s | elapsed {_clock(elapsed)} eta {_clock(eta)}  {note}".rstrip()
            )

    def beat(self, stop: threading.Event | None = None) -> bool:
        """Print the heartbeat if trials run, no line was printed for `heartbeat_s` and `stop`
        is not set; whether it did. Each trial named is the longest-running, with what it did so far:

            [ 3/210] still running: 4 trial(s), 203 waiting | elapsed 0:31:02
                     aten::softmax  0:29:58 of 0:30:00  session 2, 41 of 60 turns, 6 of 30 checks (best correct 1.83x), $0.8120
                     (the next two longest, then)
                     ... and 1 more
        """
        with self._lock:
            now = self.clock()
            if (not self.heartbeat_s or not self._running or now - self._last_line < self.heartbeat_s
                    or (stop and stop.is_set())):
                return False
            width = len(str(self.total))
            lead = f"  [{self.done:>{width}}/{self.total}] "
            waiting = self.total - self.done - len(self._running)
            lines = [f"{lead}still running: {len(self._running)} trial(s)"
                     f"{f', {waiting} waiting' if waiting > 0 else ''} | elapsed {_clock(now - self.started)}"]
            longest = sorted(self._running.items(), key=lambda item: item[1][1])
            wall, of = self.wall(), getattr(self.limits, "wall_s", None)
            for key, (name, began) in longest[:HEARTBEAT_TRIALS]:
                detail = so_far(self.events_of(key), wall, self.limits)
                took = f"{_clock(now - began)}{f' of {_clock(of)}' if of else ''}"
                lines.append(f"{' ' * len(lead)}{name:<34} {took}  {detail}".rstrip())
            if len(longest) > HEARTBEAT_TRIALS:
                lines.append(f"{' ' * len(lead)}... and {len(longest) - HEARTBEAT_TRIALS} more")
            self._print("\n".join(lines))
            return True

    @contextlib.contextmanager
    def beating(self) -> Iterator[None]:
        """`beat` from a thread of its own while the block runs: a daemon, so that nothing it
        waits on can keep the process; it ends with the block, Ctrl-C's exception included,
        and prints no line after it (kgb.run, whose summary follows). A heartbeat that fails
        (stdout closed, a pipe gone) ends the heartbeat, never the job. With no heartbeat
        (progress.heartbeat_s=0), no thread either."""
        if not self.heartbeat_s:
            yield
            return
        stop = threading.Event()
        tick = min(5.0, max(0.02, self.heartbeat_s / 4))  # a line comes at most a quarter late

        def run() -> None:
            while not stop.wait(tick):
                try:
                    self.beat(stop)  # which looks at `stop` under the lock that every line takes
                except Exception as exc:  # noqa: BLE001 - the heartbeat is never worth the job
                    with contextlib.suppress(Exception):
                        print(f"kgb: the progress heartbeat stopped: {type(exc).__name__}: {exc}",
                              file=sys.stderr, flush=True)
                    return

        thread = threading.Thread(target=run, name="kgb-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(timeout=5)  # it waits on nothing but a line being printed

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


def so_far(events: Sequence[Event], now: float, limits: Any = None) -> str:
    """What a running trial did so far, from its events in the log (every attempt's): an
    agent's session, turns and checks (out of `limits`' max_turns and max_checks where
    given) and best check; another method's model calls and judged candidates; what its
    calls cost; how long since it logged anything, past IDLE_S, and what that was."""
    events = list(events)  # the log's own list, which the trial's thread appends to
    sessions = {e.session for e in events if isinstance(e, SessionStarted)}
    turns = {(e.session, e.turn) for e in events if isinstance(e, TurnTaken)}  # a resumed attempt logs some again
    calls = [e for e in events if isinstance(e, ModelCalled)]  # a resumed attempt's replies from the log are not
    checks = {e.candidate: e.verdict for e in events if isinstance(e, CandidateChecked)}
    judged = {e.candidate: e.verdict for e in events if isinstance(e, CandidateEvaluated)}
    parts = []
    if len(sessions) > 1:
        parts.append(f"session {max(sessions)}")
    if turns:
        parts.append(_count(len(turns), "turn", getattr(limits, "max_turns", None)))
    elif calls:
        parts.append(_count(len(calls), "model call"))
    if checks:
        parts.append(f"{_count(len(checks), 'check', getattr(limits, 'max_checks', None))} "
                     f"(best {_verdict(checks.values())})")
    if judged:
        parts.append(f"{_count(len(judged), 'candidate')} judged (best {_verdict(judged.values())})")
    cost = math.fsum(e.usage.cost_usd for e in calls)
    if cost:
        parts.append(f"${cost:.4f}")
    if len(events) > 1 and now - events[-1].ts >= IDLE_S:  # past its TrialStarted
        # since TurnTaken: the agent's tools run, or its model answers; CandidateProposed: a judge runs
        parts.append(f"nothing logged for {_clock(now - events[-1].ts)} (last: {events[-1].kind})")
    return ", ".join(parts)


def _count(n: int, what: str, of: int | None = None) -> str:
    """`1 turn`, `3 turns`, `3 of 60 turns`."""
    return f"{n} of {of} {what}s" if of else f"{n} {what}{'' if n == 1 else 's'}"


def _verdict(verdicts: Iterable[Verdict]) -> str:
    """The best of them (as TrialOutcome.best ranks): `correct 1.83x`, `wrong_output`."""
    best = max(verdicts, key=verdict_rank)
    return f"{best.status.value} {best.speedup:.2f}x" if best.speedup else best.status.value


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


def summary_table(outcomes: list[TrialOutcome], summary: JobSummary, out: TextIO | None = None) -> None:
    """One row per trial and a closing line. Columns of timings appear only where
    something was timed: on the CPU they would all be empty, so they are left out."""
    out = out if out is not None else sys.stdout  # as it is now, not at import
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
    if summary.replayed_note:  # a replay's tokens: shown, but not as what this run paid
        print(summary.replayed_note, file=out, flush=True)
    skips = sorted({t.reason for t in outcomes if t.status.value == "skipped" and t.reason})
    if skips and not summary.trials:  # nothing ran: say why once, not only on the progress lines
        print(f"nothing was judged: {'; '.join(skips)[:500]}", file=out, flush=True)
    retry = sum(1 for t in outcomes if t.status.value == "infra_error")
    if retry:
        print(f"{retry} trial(s) hit an infrastructure failure and have no result: run the same command "
              "again to retry them", file=out, flush=True)
