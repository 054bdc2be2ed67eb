"""One timing at a time per GPU, whichever judge process holds the turn, on a GPU nobody
else is using meanwhile.

Draws, compiles, transfers and checks of many evaluations overlap; only the judge's
measurements (its replay of the candidate's call, the baseline) take the GPU's turn, each
for as long as it measures. The judges' other GPU work (a case's reference, the
candidate's checked and recorded calls, the comparison) runs in `work()` sections,
which a turn waits to drain and which wait while any turn is held or asked for: another
judge's check running beside a timing slowed it up to 12x on the H200 (session 15:
grouped_topk 12 us alone, 77 us in a sweep). Turns asked for while others are held are
served together, so that the running sections drain once for them all rather than once
each. Four lock files per GPU (kgb.evaluate._timing_lock names the first; the others add
a suffix) carry this between judges forked by different engines, or by different jobs of
one multirun.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kgb.evaluate.phases import Phases

WORK_SUFFIX = ".work"  # shared by running work sections; a turn takes it whole
WANT_SUFFIX = ".want"  # shared by every turn asked for or held; a section passes it whole
# shared by every turn asked for or held, never touched by sections: a gathering turn reads it,
# since a section passing `.want` would look like a turn asked for (CI, stop 43)
ASKED_SUFFIX = ".asked"
# Where a judge waits, as phases of its verdict (benchmarks/throughput.py sums them): a turn
# behind other turns, a turn for the running sections to end, a section behind the turns.
WAIT_FOR_TURN = "waiting for the GPU: a turn behind turns"
WAIT_FOR_DRAIN = "waiting for the GPU: a turn for sections to end"
WAIT_FOR_SECTION = "waiting for the GPU: a section behind turns"
WAIT_FOR_COMPANY = "waiting for the GPU: a turn for others to ask"
SETTLE = "waiting for the section's GPU work to end"
IDLE_S = 1.0  # a GPU left without timings or work sections this long may have lowered its clocks
DRAIN_LIMIT_S = 10.0  # how long a turn waits for running work sections before timing beside them
# How long a turn asked for while no other is waits for another judge to ask too, before it
# stops new sections: turns asked for together drain the running sections once. Off by
# default; GATHER_ENV sets it for a job (the engine passes the harness's environment on):
# benchmarks/lock_model.py --profile s23 modelled nothing gained at 12 judges and 4-6% at 20
# with 0.25-0.5 s (session 36); on the H200 (session 37) 0.25 s gained nothing (a fresh
# machine's sweep 257.6 s against 249.5 s, its drains 41.5 s against 53.0 s).
GATHER_S = 0.0
GATHER_ENV = "KGB_GATHER_S"
GATHER_MOST_S = 5.0
# A file that every judge appends its turns, work sections and process starts to, one JSON
# line each, when this names one: what a sweep's turns waited for (benchmarks/gpu_trace.py)
TRACE_ENV = "KGB_GPU_TRACE"


def trace(kind: str, asked: float, began: float, ended: float, **fields: object) -> None:
    """One line of the trace, if one is kept; times from the system-wide monotonic clock."""
    path = os.environ.get(TRACE_ENV)
    if not path:
        return
    line = json.dumps({"kind": kind, "pid": os.getpid(), "asked": asked, "began": began, "ended": ended, **fields})
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())  # one write with O_APPEND: lines of many judges never interleave
    finally:
        os.close(fd)


def gather_s() -> float:
    """A lone turn's wait for company, in seconds: GATHER_ENV's, else GATHER_S."""
    raw = os.environ.get(GATHER_ENV, "")
    if not raw:
        return GATHER_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= GATHER_MOST_S:
        raise ValueError(f"{GATHER_ENV}={raw!r}: give a lone timing turn's wait for company in seconds, "
                         f"0 to {GATHER_MOST_S:g}")
    return value


def _until_another_asks(asked, limit_s: float) -> None:
    """Wait until some other judge has asked for a turn (its shared lock on `asked`), at most
    limit_s. Work sections go on meanwhile: nothing is held."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            fcntl.flock(asked, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return  # a turn is asked for or held
        fcntl.flock(asked, fcntl.LOCK_UN)
        time.sleep(0.005)


def _free(f) -> bool:
    """Whether no one holds `f`'s lock, shared or whole, at this instant; nothing is kept."""
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    fcntl.flock(f, fcntl.LOCK_UN)
    return True


def _flock_within(f, operation: int, limit_s: float) -> bool:
    """flock, giving up after limit_s; whether it was granted."""
    deadline = time.monotonic() + limit_s
    while True:
        try:
            fcntl.flock(f, operation | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)


class TimingLock:
    def __init__(self, path: str | None, phase: Phases, settle: Callable[[], None] = lambda: None):
        self.path, self.phase = path, phase
        # Waits for this process's GPU work to finish: a section ends only once what it queued
        # has run (CUDA returns before kernels finish; a turn could otherwise start beside them).
        self.settle = settle
        self.crowded_turns = 0  # turns that timed while another judge's work section ran on
        self.tag = ""  # what the trace says this judge judges (TRACE_ENV)
        self._held: list = []  # the open work-section files whose shared lock this judge holds
        self._paused = False  # their locks let go of for now (`paused`)
        self.gather_s = gather_s()
        # a held section's stretch: asked, entered, the phases' seconds and the innermost phase then
        self._since: dict[int, tuple[float, float, dict[str, float], str]] = {}

    def _create(self) -> None:
        for path in (self.path, self.path + WORK_SUFFIX):
            if not os.path.exists(path):
                with open(path, "a"):
                    os.utime(path, (0, 0))  # never used: the first turn spins the GPU up

    @contextmanager
    def __call__(self) -> Iterator[None]:
        if not self.path:
            yield
            return
        self._create()
        with open(self.path + WANT_SUFFIX, "a") as want, open(self.path, "a") as f, \
                open(self.path + WORK_SUFFIX, "a") as work, open(self.path + ASKED_SUFFIX, "a") as others:
            asked = time.monotonic()
            if self.gather_s > 0:
                with self.phase(WAIT_FOR_COMPANY):
                    _until_another_asks(others, self.gather_s)
            gathered = time.monotonic()  # sections ran on until now: the trace tells this apart
            with self.phase(WAIT_FOR_TURN):
                fcntl.flock(others, fcntl.LOCK_SH)  # a gathering turn goes now
                fcntl.flock(want, fcntl.LOCK_SH)  # from now on no new work section starts
                fcntl.flock(f, fcntl.LOCK_EX)
            turn = time.monotonic()
            with self.phase(WAIT_FOR_DRAIN):
                # The sections already running must end, within a bound: a candidate hanging
                # in its check must not stop every timing of the GPU.
                drained = _flock_within(work, fcntl.LOCK_EX, DRAIN_LIMIT_S)
            drained_at = time.monotonic()
            if not drained:
                self.crowded_turns += 1
            measured = None
            try:
                # Work sections keep the GPU busy as well as turns do: on the H200 (session 18)
                # 32 s of the sweep's 146 s of turns went to spinning up a GPU that sections had
                # kept busy, because only turns counted.
                busy = max(os.fstat(f.fileno()).st_mtime, os.fstat(work.fileno()).st_mtime)
                if time.time() - busy > IDLE_S:
                    with self.phase("spin-up"):
                        spin_up()
                measured = time.monotonic()
                yield
            finally:
                if TRACE_ENV in os.environ:
                    trace("turn", asked, turn, time.monotonic(), gathered=gathered, drained=drained_at, measured=measured,
                          crowded=not drained, tag=self.tag, peak_mib=_peak_mib())
                os.utime(self.path)  # when the GPU last timed: the next turn skips the spin-up
                if drained:
                    fcntl.flock(work, fcntl.LOCK_UN)
                fcntl.flock(f, fcntl.LOCK_UN)
                fcntl.flock(want, fcntl.LOCK_UN)
                fcntl.flock(others, fcntl.LOCK_UN)

    def idle_within(self, limit_s: float, poll_s: float = 0.005) -> bool:
        """Whether the GPU was seen idle within `limit_s`: at some instant no turn asked for or
        held and no work section running. For GPU work that should only fill the time the
        judges leave idle (kgb.evaluate.baseline_judge); nothing is held once it returns, so
        what starts next is served in the usual order."""
        if not self.path:
            return True
        self._create()
        deadline = time.monotonic() + limit_s
        with open(self.path + ASKED_SUFFIX, "a") as asked, open(self.path + WORK_SUFFIX, "a") as work:
            while True:
                if _free(asked) and _free(work):
                    return True
                if time.monotonic() >= deadline:
                    return False
                time.sleep(poll_s)

    @contextmanager
    def work(self) -> Iterator[None]:
        """A section of GPU work that is not a measurement: any number run at once, none
        while a turn is held or asked for. Never take the turn inside one (the turn would
        wait for it)."""
        if not self.path:
            yield
            return
        self._create()
        with open(self.path + WORK_SUFFIX, "a") as work:
            self._enter([work])
            self._held.append(work)
            try:
                yield
                with self.phase(SETTLE):
                    self.settle()
            finally:
                self._traced(work)
                self._held.remove(work)
                os.utime(work.fileno())  # when the GPU last worked: a turn soon after needs no spin-up
                fcntl.flock(work, fcntl.LOCK_UN)

    def _enter(self, sections: list) -> None:
        asked = time.monotonic()
        with self.phase(WAIT_FOR_SECTION), open(self.path + WANT_SUFFIX, "a") as want:
            # Granted only when no turn is held or asked for (all of them share it), and let
            # go at once: it orders these sections after the turns, it does not hold.
            fcntl.flock(want, fcntl.LOCK_EX)
            for work in sections:
                fcntl.flock(work, fcntl.LOCK_SH)
            fcntl.flock(want, fcntl.LOCK_UN)
        if TRACE_ENV in os.environ:
            for work in sections:
                self._since[id(work)] = (asked, time.monotonic(), dict(self.phase.seconds), self.phase.current)

    def _traced(self, work) -> None:
        """The trace's line for a stretch of a section held (TRACE_ENV), named after the phase
        that ended in it and took most of it, else the phase it ran in."""
        since = self._since.pop(id(work), None)
        if since is None:
            return
        asked, entered, before, inside = since
        grew = {k: v - before.get(k, 0.0) for k, v in self.phase.seconds.items() if not k.startswith("waiting")}
        what = max(grew, key=grew.get, default="")
        if grew.get(what, 0.0) <= 0.0:  # no phase ended in it: an outer one's time is counted when it ends
            what = inside
        trace("section", asked, entered, time.monotonic(), what=what, tag=self.tag)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Let go of the work sections held here for a while that uses no GPU (the
        candidate compiling, inputs and outputs crossing the socket), then take them back,
        after any turn asked for meanwhile. Whatever ran on the GPU before has finished (the
        candidate process synchronises before it says it compiles; the bytes that cross were
        copied off the GPU first). A pause inside a pause is the outer one."""
        if self._paused or not self._held:
            yield
            return
        held = list(self._held)
        for work in held:
            self._traced(work)
            fcntl.flock(work, fcntl.LOCK_UN)
        self._paused = True
        try:
            yield
        finally:
            self._paused = False
            self._enter(held)


def _peak_mib() -> int | None:
    """The most GPU memory this process's caching allocator has held so far, in MiB, for the
    trace: a first run on the H200 peaked at the GPU's whole memory (session 34) and which
    judgements held it was not known. None where CUDA is not started here."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return None
    return int(torch.cuda.max_memory_reserved()) >> 20


def spin_up(seconds: float = 0.2) -> None:
    """Keep the GPU busy for a moment before timing: an idle GPU runs at low clocks, and the
    first timings after a pause came out slower (and chose eager over graph timing)."""
    import torch

    x = torch.full((2048, 2048), 0.5, device="cuda")  # no random op: nothing here depends on the generator's state
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        for _ in range(10):
            x = (x @ x).clamp_(-1, 1)
        torch.cuda.synchronize()
