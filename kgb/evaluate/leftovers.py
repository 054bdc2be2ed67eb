"""What a judge process leaves for its exit to free: objects it no longer needs whose freeing
would cost time on the way to its verdict.

A judge writes its verdict, tells the engine so, and leaves by os._exit
(kgb.evaluate.sandbox.exit_after), which runs no finalizer: the kernel takes its memory back
as the process ends, after the verdict is out. Freeing the same objects before that was time
of the evaluation (session 60's profile of the judge on an H100): a profiler session's records
(kgb.evaluate.kernel_clock), part of the 0.05-0.08 s each view's judge took to end its session,
and the memory files of the replies of aten::reshape's bench case, 768 MB, 0.16 s to unmap
(kgb.evaluate.candidate_process). A process that goes on
(a test's, a benchmark's) frees the oldest beyond KEPT as it leaves more.
"""

from __future__ import annotations

from typing import Any

KEPT = 8
_left: list[Any] = []


def leave(thing: Any) -> None:
    """Hold `thing` until this process ends, or until KEPT more things are left."""
    _left.append(thing)
    del _left[:-KEPT]
