"""What a judge process would otherwise free on its way to a verdict: objects it no longer
needs whose freeing takes time, left for its exit (`leave`) or freed beside its work
(`free_beside`).

A judge writes its verdict, tells the engine so, and leaves by os._exit
(kgb.evaluate.sandbox.exit_after), which runs no finalizer: the kernel takes its memory back
as the process ends, after the verdict is out. Freeing the same objects before that was time
of the evaluation: the memory files of the replies of aten::reshape's bench case, 768 MB, 0.16 s
to unmap (kgb.evaluate.candidate_process; session 60's profile of the judge on an H100), and a
profiler session's records (kgb.evaluate.kernel_clock; some of the 0.05-0.08 s each view's
judge took to end its session, how much was not measured apart: most of it is making the
records Python objects, session 61). A process that goes on (a test's, a benchmark's) frees
the oldest beyond KEPT as it leaves more.

What the judge lets go of mid-judgement (an earlier reply's file, once it has handed over the
next call) is freed by a thread of its own instead: unmapping releases the interpreter's lock,
so it runs while the judge goes on; in the judge's own thread it took reshape's judge 0.085 s
(session 61's profile, H100), longer than the candidate's work it was meant to run beside.
"""

from __future__ import annotations

import queue
import threading
from typing import Any

KEPT = 8
_left: list[Any] = []
_to_free: queue.SimpleQueue | None = None


def leave(thing: Any) -> None:
    """Hold `thing` until this process ends, or until KEPT more things are left."""
    _left.append(thing)
    del _left[:-KEPT]


def free_beside(thing: Any) -> None:
    """Let go of `thing` in this process's freeing thread: its last reference, if the caller
    holds no other, goes there."""
    global _to_free
    if _to_free is None:
        _to_free = queue.SimpleQueue()
        threading.Thread(target=_freeing, args=(_to_free,), name="kgb freeing", daemon=True).start()
    _to_free.put(thing)


def _freeing(things: queue.SimpleQueue) -> None:
    while True:
        thing = things.get()
        del thing  # here, not in the caller's thread


def drained() -> None:
    """Wait until what was passed to `free_beside` so far has been let go of (for tests)."""
    if _to_free is not None:
        done = threading.Event()
        _to_free.put(_Signal(done))
        done.wait(10)


class _Signal:
    """Sets its event as it is freed: the freeing thread got this far."""

    def __init__(self, event: threading.Event):
        self.event = event

    def __del__(self) -> None:
        self.event.set()
