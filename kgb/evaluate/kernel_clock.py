"""The GPU's own count of a timed call (judge v8): how long the GPU was busy with it, from
the start and end times of its kernels, copies and fills as CUPTI records them through
PyTorch's profiler.

Events recorded around a call on its stream also count the latency from the first event to
the call's first kernel and from its last kernel to the second event: 2-3 us on the H200
(docs/gpu-results.md, session 23: a 1 us kernel read as 3.7 us, a 4.7 us softmax as 6.4 us),
so the speedups of short kernels were pressed toward 1 (issue 11 asks for Nsight Compute's
count within 0.5 us under 10 us). Here a repetition's time is the union of its device
activities' intervals: for kernels that run one after another, Nsight Compute's
`gpu__time_duration` summed over the call; kernels that overlap (side streams) count once;
the host's launch gaps between kernels count not at all, as in that sum.

Each repetition runs inside `repetition()`, a profiler range named MARK. A device activity
belongs to the repetition whose range holds the host op or range that launched it (the
profiler links each kernel to the innermost op around its launch, a graph's kernels to the
op around the graph's launch), so the L2 flush between repetitions, launched outside the
ranges, is never counted.

A judge runs one session around each timing turn (`session()`): started before the turn is
asked for, stopped and read after it is let go of. The profiler's start and stop are driver
work that another process's CUDA start slows (session 25 on the H200: a turn measured beside
one took a median 0.164 s, the others 0.054 s), and none of it is the GPU's to wait for.
Each measurement in the turn takes a `Reading` of the session: its own repetitions.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from kgb.evaluate import leftovers

MARK = "kgb::timed-call"
# the profiler's kinds of device activity that are the call's work (not, say, the span of a
# user annotation on the GPU's timeline)
DEVICE_WORK = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
# the host's calls that launch device work, as the profiler names their kind
LAUNCHES = frozenset({"cuda_runtime", "cuda_driver"})
# why a measurement has no GPU count: the call did no work on the GPU (a view), or the profile
# lost every record of what it did
NO_DEVICE_WORK = "the profile holds a timed call with no device activity"


class KernelClock:
    """A profiler session around one or more measurements: `with KernelClock() as clock:`,
    each measurement taking its `clock.reading()` and each of its timed repetitions `with
    reading.repetition():`; after the block, the reading's `samples()` gives each repetition's
    device time in microseconds, or its `error` says why there is none (the caller then keeps
    its events' times)."""

    def __init__(self) -> None:
        self.error = ""
        self._profile: Any = None
        self._events: list | None = None
        self._read: tuple[list, list[list[tuple[int, int]]]] | None = None  # the events and their spans
        self.repetitions = 0
        self.running = False

    def __enter__(self) -> KernelClock:
        import warnings

        from torch.autograd import profiler

        self.running = True
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # What torch.profiler.profile starts, without its look for torch._inductor,
                # which imports it and torch._dynamo: 3.8 s of CPU in every judge on the H200.
                # use_kineto, or torch 2.11 records no kernels.
                self._profile = profiler.profile(use_cpu=True, use_device="cuda", use_kineto=True,
                                                 record_shapes=False)
                self._profile.__enter__()
        except Exception as exc:  # noqa: BLE001 - no CUPTI here, or a profiler already running
            self._profile, self.error = None, f"the profiler did not start: {type(exc).__name__}: {str(exc)[:200]}"
        return self

    def reading(self) -> Reading:
        """A measurement's share of the session: the repetitions run through it from now."""
        return Reading(self, self.repetitions)

    @contextmanager
    def repetition(self) -> Iterator[None]:
        import torch

        self.repetitions += 1
        if self._profile is None:
            yield
            return
        with torch._C._profiler._RecordFunctionFast(MARK):
            yield

    def __exit__(self, *exc: object) -> None:
        self.running = False
        if self._profile is None:
            return
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._profile.__exit__(None, None, None)
            self._events = list(self._profile.kineto_results.events())
        except Exception as e:  # noqa: BLE001
            self.error = f"the profiler did not stop: {type(e).__name__}: {str(e)[:200]}"
        # freeing every record the session took: left for the judge's exit (kgb.evaluate.leftovers)
        leftovers.leave((self._profile, self._events))
        self._profile = None

    def share(self, first: int, count: int) -> tuple[list[float] | None, str, int]:
        """Microseconds of repetitions first .. first + count - 1 that the profile recorded
        whole, or None and why not; and how many device activities each held."""
        if self.running:
            raise RuntimeError("the kernel clock is read while its session still runs")
        if self._events is None:
            return None, self.error or "no profile was recorded", 0
        if self._read is None or self._read[0] is not self._events:  # read once for all its measurements
            try:
                self._read = (self._events, activity_spans(self._events))
            except Exception as exc:  # noqa: BLE001 - a profile this code cannot read: the events' times stand
                return None, f"the profile could not be read: {type(exc).__name__}: {str(exc)[:200]}", 0
        every = self._read[1]
        if len(every) != self.repetitions:
            return None, f"the profile holds {len(every)} timed calls, not the {self.repetitions} run", 0
        spans = every[first:first + count]
        most = max((len(s) for s in spans), default=0)
        if most == 0:
            return None, NO_DEVICE_WORK, 0
        # Every repetition launches the same work: one with fewer activities than the others
        # lost a record, and a time summed without it would be too short (session 24: a
        # two-kernel attention read 264 us against 420-436 us). So only the repetitions
        # recorded whole count, where they are most of them. Until judge v17 any loss left
        # the events' time, which counts the host's launch gaps on a loaded host: vLLM's
        # copy_blocks over 80 layers (160 copies a call) lost one record in two of nine
        # sweeps of the H200, its candidate then read 3.8 ms against 0.41 ms by the GPU's
        # count, and its baseline read 2.25-2.27 ms in two first runs, 5.6-10.3 ms in five
        # (sessions 34-35; the baseline's timing mode is not recorded, so the cause there is
        # likely, not shown).
        whole = [s for s in spans if len(s) == most]
        if 2 * len(whole) < len(spans):
            fewest = min(len(s) for s in spans)
            return None, (f"the timed calls hold {fewest} to {most} device activities each, and only "
                          f"{len(whole)} of {len(spans)} all {most}"), 0
        return [_union_ns(s) / 1000.0 for s in whole], "", most


class Reading:
    """One measurement's repetitions within a session (`KernelClock.reading`)."""

    def __init__(self, clock: KernelClock, first: int):
        self.clock, self.first, self.count = clock, first, 0
        self.error = ""
        self.activities = 0  # device activities (kernels, copies, fills) each repetition held, once read

    @contextmanager
    def repetition(self) -> Iterator[None]:
        self.count += 1
        with self.clock.repetition():
            yield

    def samples(self) -> list[float] | None:
        """Microseconds per repetition once the session has ended; None (and `error` set)
        where the record does not account for them."""
        found, self.error, self.activities = self.clock.share(self.first, self.count)
        return found


_open: KernelClock | None = None  # this process's session around its timing turn, if one runs


@contextmanager
def session() -> Iterator[KernelClock]:
    """A profiler session for the measurements inside it (`timing.measure` reads it through
    `current()`): the judge takes its timing turn inside one, so that the profiler starts
    before the turn and stops after it. Inside another session, that one."""
    global _open
    if _open is not None:
        yield _open
        return
    with KernelClock() as clock:
        _open = clock
        try:
            yield clock
        finally:
            _open = None


def current() -> KernelClock | None:
    """The session running in this process (`session`), if one is."""
    return _open


_warm = False


def warm_up() -> None:
    """Start and stop the profiler once around a tiny kernel: its first start in a process
    takes the longest (CUPTI's set-up), which a spare judge pays before its request, not in
    a timing turn that every judge of the GPU waits for. Once per process."""
    global _warm
    if _warm:
        return
    _warm = True
    import torch

    x = torch.zeros(1, device="cuda")
    with KernelClock() as clock, clock.repetition():
        x.add_(1)
    torch.cuda.synchronize()


def busy_times(events: Iterable[Any]) -> list[float]:
    """Per MARK range of the host, in order: microseconds the device was busy with the
    activities launched inside it (the union of their intervals). `events` are the
    profiler's (KinetoEvent)."""
    return [_union_ns(s) / 1000.0 for s in activity_spans(events)]


def activity_spans(events: Iterable[Any]) -> list[list[tuple[int, int]]]:
    """Per MARK range of the host, in order: the (start, end) in ns of each device activity
    launched inside it. A device activity's launch is found by its correlation id, which the
    runtime call that launched it (cudaLaunchKernel, cudaGraphLaunch) shares; failing that,
    by its link to the innermost op around the launch."""
    from torch.autograd import DeviceType

    ops, runtime, device, marks = {}, {}, [], []
    for e in events:
        kind = _kind(e)
        if e.device_type() == DeviceType.CPU:
            if e.linked_correlation_id() == 0:  # an op or a range
                ops[e.correlation_id()] = e.start_ns()
                if e.name() == MARK:
                    marks.append((e.start_ns(), e.end_ns()))
            elif kind is None or kind in LAUNCHES:  # a runtime call, linked to the op around it
                runtime[e.correlation_id()] = e.start_ns()
        elif kind in DEVICE_WORK or (kind is None and e.name() != MARK):
            device.append(e)
    marks.sort()
    starts = [s for s, _ in marks]
    spans: list[list[tuple[int, int]]] = [[] for _ in marks]
    for e in device:
        launched = runtime.get(e.correlation_id(), ops.get(e.linked_correlation_id()))
        if launched is None:
            continue
        i = bisect.bisect_right(starts, launched) - 1
        if i >= 0 and launched <= marks[i][1]:
            spans[i].append((e.start_ns(), e.end_ns()))
    return spans


def _kind(event: Any) -> str | None:
    """The profiler's kind of the event; None where this PyTorch does not say (2.11 does
    not), where an event on the device is taken for work and a linked host event for the
    runtime call that launched it."""
    kind = getattr(event, "activity_type", None)
    return kind() if kind is not None else None


def _union_ns(intervals: list[tuple[int, int]]) -> int:
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total
