"""The harness's handle on the warm engine (kgb.evaluate.engine_process): it starts the
engine process, sends it judgements to run and spares to start, and waits for their ends.
Safe to use from several threads; one engine per harness process and settings
(kgb.evaluate keeps them).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kgb.evaluate import gpus
from kgb.evaluate.tree_removal import remove_tree

# The engine asks to die with its parent (PR_SET_PDEATHSIG), and Linux sends that signal
# when the *thread* that started it ends, not the process. Engines are shared: one started
# by a trial's worker thread, or by the request thread of an agent's check, would be killed
# when that thread ends, with every judgement in flight on it. So every engine is started
# by one thread that lives as long as the harness process.
_starts: queue.Queue = queue.Queue()


def _starter() -> None:
    while True:
        start, box, started = _starts.get()
        try:
            box.append(start())
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller, raised there
            box.append(exc)
        started.set()


_starter_thread: threading.Thread | None = None
_starter_lock = threading.Lock()


def _start_from_the_lasting_thread(start):
    global _starter_thread
    with _starter_lock:
        if _starter_thread is None or not _starter_thread.is_alive():
            _starter_thread = threading.Thread(target=_starter, name="kgb-engine-starter", daemon=True)
            _starter_thread.start()
    box: list = []
    started = threading.Event()
    _starts.put((start, box, started))
    started.wait()
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


# how often a judge's wait looks whether its evaluation was aborted (kgb.evaluate.disk_bound)
ABORT_POLL_S = 0.1


class EngineDied(RuntimeError):
    """The engine process ended: an infrastructure failure, not a verdict on a candidate."""


# Spare judges waiting for the next evaluations of one settings: as many as evaluations of
# them are in flight, up to this many. One was not enough for a sweep: on the H200 (session
# 21, 12 in flight) an evaluation that found no spare waited 2-9 s for its judge to start,
# 580 s summed over the 210 operators, and the short operators at the sweep's end waited
# longer than they were judged. Each spare holds a judge and its candidate process, on a
# GPU two CUDA contexts (three until judge v15), so the pool stays small (`pool_size`).
SPARES_PER_SETTINGS = 6
# ... and at least this many while none has run out of GPU memory: an agent judges one
# candidate after another, and a spare takes longer to start than a short evaluation takes
# (on the H200, sessions 24 and 25, judging the view operators one at a time, each one that
# followed an evaluation under about 1.2 s waited 0.5-0.7 s for its judge)
SEQUENTIAL_SPARES = 2
# ... and at most this many in all (a multi-GPU host's evaluations differ in
# CUDA_VISIBLE_DEVICES: a settings per GPU)
MAX_SPARES = 16


@dataclass(frozen=True)
class Spare:
    """A spare judge the engine holds for the next evaluation of these settings (`key`); its
    workspace is `workdir / "candidate"`, its log `workdir / "stderr.log"`."""
    sid: str
    key: str
    workdir: Path


@dataclass
class _Pending:
    done: threading.Event = field(default_factory=threading.Event)
    status: int | None = None


class Engine:
    """The harness's handle on one engine process; safe to use from several threads."""

    def __init__(self, env: dict[str, str]):
        self.proc = _start_from_the_lasting_thread(lambda: subprocess.Popen(
            [sys.executable, "-m", "kgb.evaluate.engine_process"], env=env, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1,
            start_new_session=True,
        ))
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self.leases = 0  # evaluations holding this engine (kgb.evaluate._engine counts them)
        self._next = 0
        self._spares: list[Spare] = []  # the oldest first
        self._in_flight: Counter[str] = Counter()  # evaluations by settings key (`evaluating`)
        first = self.proc.stdout.readline() if self.proc.stdout else ""
        if first.strip() != "ready":
            raise EngineDied(f"the evaluation engine did not start (exit {self.proc.poll()})")
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            words = line.split()
            if len(words) == 3 and words[0] == "done":
                with self._lock:
                    pending = self._pending.get(words[1])
                if pending is not None:
                    pending.status = int(words[2])
                    pending.done.set()
        with self._lock:  # the engine is gone: wake everyone who waits
            for pending in self._pending.values():
                pending.done.set()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


    @contextmanager
    def evaluating(self, key: str) -> Iterator[Spare | None]:
        """One evaluation of settings `key` in flight: it runs on the spare judge that has
        waited longest for these settings, yielded (now the caller's to `run`), or on a judge
        forked for it (None)."""
        with self._lock:
            self._in_flight[key] += 1
            spare = next((s for s in self._spares if s.key == key), None)
            if spare is not None:
                self._spares.remove(spare)
        try:
            yield spare
        finally:
            with self._lock:
                self._in_flight[key] -= 1

    def spares_wanted(self, key: str) -> int:
        """How many spare judges to start for settings `key` now, to fill their pool
        (`pool_size`)."""
        with self._lock:
            return max(0, self._pool_size(key) - sum(s.key == key for s in self._spares))

    def _pool_size(self, key: str) -> int:
        return pool_size(self._in_flight[key], ran_out=gpus.memory.lowered)

    def start_spare(self, key: str, workdir: Path, order: dict) -> None:
        """Have a spare judge started in `workdir` for the next evaluations of settings
        `key`, unless enough wait for them already; past MAX_SPARES, the oldest is let go.
        `order`: the spare's device, timeout_s and env (kgb.evaluate.spare)."""
        dropped: list[Path] = []
        with self._lock:
            if sum(s.key == key for s in self._spares) >= self._pool_size(key):
                dropped.append(workdir)  # another evaluation topped the pool up meanwhile
            else:
                self._next += 1
                spare = Spare(f"s{self._next}", key, workdir)
                self._spares.append(spare)
                self._send(json.dumps({**order, "spare": spare.sid,
                                       "workspace": str(workdir / "candidate"), "log": str(workdir / "stderr.log")}))
            while len(self._spares) > MAX_SPARES:
                oldest = self._spares.pop(0)
                self._send(json.dumps({"drop": oldest.sid}))
                dropped.append(oldest.workdir)
        for folder in dropped:
            remove_tree(folder)

    def run(self, request: Path, log: Path, env: dict[str, str], timeout_s: float, spare: Spare | None = None,
            abort: threading.Event | None = None) -> str:
        """Judge one request, on `spare` if it is still up; "ok", "timeout", "aborted" (`abort`
        was set: the judge killed) or "died:<reason>", as the judge process ended."""
        with self._lock:
            self._next += 1
            rid = str(self._next)
            pending = self._pending[rid] = _Pending()
            self._send(json.dumps({"run": rid, "request": str(request), "log": str(log), "env": env,
                                   **({"spare": spare.sid} if spare else {})}))
        try:
            deadline = time.monotonic() + timeout_s
            while not pending.done.wait(min(ABORT_POLL_S, max(deadline - time.monotonic(), 0))):
                aborted = abort is not None and abort.is_set()
                if aborted or time.monotonic() >= deadline:
                    with self._lock:
                        self._send(json.dumps({"kill": rid}))
                    pending.done.wait(30)
                    return "aborted" if aborted else "timeout"
            if pending.status is None:
                raise EngineDied("the evaluation engine died")
            return _outcome(pending.status)
        finally:
            with self._lock:
                self._pending.pop(rid, None)

    def _send(self, line: str) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise EngineDied("the evaluation engine died") from exc

    def forget_spares(self) -> None:
        """Remove the spares' folders (once the engine is closed, or at exit: the engine, and
        its spares with it, die with this process)."""
        with self._lock:
            spares, self._spares = self._spares, []
        for spare in spares:
            remove_tree(spare.workdir)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.forget_spares()


def pool_size(in_flight: int, ran_out: bool) -> int:
    """How many spare judges wait for one settings: one for each of their evaluations in
    flight, SEQUENTIAL_SPARES at least and SPARES_PER_SETTINGS at most, and one only while
    evaluations that ran out of GPU memory among others hold the memory gate's ceiling down
    (`ran_out`, kgb.evaluate.gpus.MemoryGate.lowered) and more than one is in flight.

    Every spare held three CUDA contexts until judge v15, 1.9 GB on the H200 (session 27); it
    holds two now, one judge's and one candidate process's. With a pool of
    six, a sweep's peak GPU memory was 138-143 GB where it had been 117 GB, and in two sweeps
    of three the evaluations that ran out and waited to run again lost more time than the
    pool saved (session 22). With one, sixteen in flight waited a median 8-12 s each outside
    the judge for it (session 26); one for every four in flight took that wait down by 8%
    while process starts took 8.0 s where they had taken 4.9-6.0 s, and the sweep got through
    150 operators in 407 s where one spare's had got through 185 (session 28). A lone caller
    keeps its two: after a sweep had run out, the view operators judged one at a time waited
    0.70-0.77 s outside the judge every other time for the one spare (session 26). Until
    session 36 one run-out left a job one spare to its end: on the H200 the hand-off outside
    the judge took 244 s and 202 s summed in the two jobs of session 35 whose evaluations had
    run out early, against 57-78 s in those where none had."""
    if ran_out and in_flight > 1:
        return 1
    return min(max(in_flight, SEQUENTIAL_SPARES), SPARES_PER_SETTINGS)


def _outcome(status: int) -> str:
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
        return "ok" if code == 0 else f"died:exit code {code}"
    sig = os.WTERMSIG(status)
    try:
        return f"died:killed by signal {signal.Signals(sig).name}"
    except ValueError:
        return f"died:killed by signal {sig}"
