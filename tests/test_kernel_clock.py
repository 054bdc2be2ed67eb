"""The judge's GPU-side clock (kgb.evaluate.kernel_clock): which device activities count
toward which timed call. The profile is built here as the profiler reports one (the GPU run
is tests/test_timing_gpu.py)."""

from __future__ import annotations

from dataclasses import dataclass

from torch.autograd import DeviceType

from kgb.evaluate.kernel_clock import MARK, KernelClock, Reading, busy_times

_ids = iter(range(1, 10_000))


@dataclass
class Event:
    """What busy_times reads of the profiler's KinetoEvent."""
    _name: str
    _device: DeviceType
    _activity: str
    _start: int
    _end: int
    _corr: int
    _linked: int

    def name(self): return self._name
    def device_type(self): return self._device
    def activity_type(self): return self._activity
    def start_ns(self): return self._start
    def end_ns(self): return self._end
    def correlation_id(self): return self._corr
    def linked_correlation_id(self): return self._linked


def op(name: str, start: int, end: int) -> Event:
    return Event(name, DeviceType.CPU, "cpu_op", start, end, next(_ids), 0)


def launch(inside: Event, at: int) -> Event:
    """The runtime call (cudaLaunchKernel, cudaGraphLaunch), linked to the op around it."""
    return Event("cudaLaunchKernel", DeviceType.CPU, "cuda_runtime", at, at + 1, next(_ids), inside.correlation_id())


def kernel(launched_by: Event, start: int, end: int, activity: str = "kernel") -> Event:
    """Device work as the profiler reports it (H200, torch 2.11): the launching runtime call's
    correlation id, and the link of its op. Given an op, no runtime call was recorded."""
    if launched_by.linked_correlation_id():
        corr, linked = launched_by.correlation_id(), launched_by.linked_correlation_id()
    else:
        corr, linked = next(_ids), launched_by.correlation_id()
    return Event("k", DeviceType.CUDA, activity, start, end, corr, linked)


def test_each_call_counts_its_own_kernels_and_never_the_flush_between():
    events = []
    for i, t in enumerate((0, 100_000)):
        flush = op("aten::sum", t, t + 10)
        mark = op(MARK, t + 20, t + 60)
        inner = op("aten::add", t + 30, t + 50)  # an op inside the call: its kernel is the call's
        graph, add = launch(mark, t + 25), launch(inner, t + 35)
        events += [flush, kernel(launch(flush, t + 5), t + 1_000, t + 50_000), mark, graph, inner, add,
                   kernel(graph, t + 50_000, t + 55_000 + i), kernel(add, t + 56_000, t + 58_000)]
    assert busy_times(events) == [7.0, 7.001]


def test_a_graph_s_kernels_count_toward_the_call_that_launched_the_graph():
    mark = op(MARK, 0, 100)
    graph = launch(mark, 50)
    events = [mark, graph, *(kernel(graph, 1_000 * i, 1_000 * i + 500) for i in range(1, 5))]
    assert busy_times(events) == [2.0]


def test_without_the_runtime_call_the_op_around_the_launch_decides():
    mark = op(MARK, 0, 100)
    inner = op("aten::mul_", 10, 90)
    assert busy_times([mark, inner, kernel(inner, 1_000, 3_000)]) == [2.0]


def test_overlapping_work_counts_once_and_idle_gaps_not_at_all():
    mark = op(MARK, 0, 100)
    events = [mark, kernel(mark, 1_000, 5_000), kernel(mark, 2_000, 6_000),  # side streams: 5 us busy
              kernel(mark, 20_000, 21_000, "gpu_memcpy"),  # after 14 us of idleness
              kernel(mark, 1_000, 90_000, "gpu_user_annotation")]  # a span on the timeline, not work
    assert busy_times(events) == [6.0]


def test_a_kernel_launched_outside_every_call_is_nobody_s():
    before, mark, after = op("aten::zero_", 0, 10), op(MARK, 20, 30), op("aten::zero_", 40, 50)
    events = [before, mark, after, kernel(before, 100, 200), kernel(mark, 300, 1_300), kernel(after, 1_400, 9_000)]
    assert busy_times(events) == [1.0]


def whole(clock: KernelClock) -> Reading:
    """Every repetition of the clock's session, read as one measurement's."""
    reading = Reading(clock, 0)
    reading.count = clock.repetitions
    return reading


def test_a_profile_that_misses_a_call_gives_no_samples():
    clock = KernelClock()
    clock.repetitions = 2
    mark = op(MARK, 0, 10)
    clock._events = [mark, kernel(mark, 100, 200)]
    reading = whole(clock)
    assert reading.samples() is None and "1 timed calls, not the 2" in reading.error
    clock.repetitions = 1
    assert whole(clock).samples() == [0.1]
    clock._events = [mark]  # a call the profiler saw no device work of: its time is unknown
    reading = whole(clock)
    assert reading.samples() is None and "no device activity" in reading.error


def test_only_the_calls_recorded_whole_count_where_they_are_most_of_them():
    """Every repetition launches the same work; one with a kernel fewer than the others
    lost a record (on the H200, session 24, one sweep timed a two-kernel attention at 264 us
    where two others and its own clock said 420-436 us), and its time would be too short. The
    others still count (session 35: vLLM's copy_blocks lost one of 160 records in two sweeps of
    nine, and its events' time read 3.8 ms against the GPU's 0.41 ms); with fewer than half
    whole, the events' time."""
    clock = KernelClock()
    clock.repetitions = 3
    marks = [op(MARK, 0, 10), op(MARK, 20, 30), op(MARK, 40, 50)]
    work = [kernel(marks[0], 100, 200), kernel(marks[0], 200, 400), kernel(marks[1], 500, 600),
            kernel(marks[1], 600, 900), kernel(marks[2], 1000, 1100), kernel(marks[2], 1100, 1200)]
    clock._events = [*marks, *work]
    assert whole(clock).samples() == [0.3, 0.4, 0.2]
    clock._events = [*marks, *work[:3], *work[4:]]  # the second call lost its second kernel
    reading = whole(clock)
    assert reading.samples() == [0.3, 0.2] and reading.activities == 2
    clock._events = [*marks, work[0], work[2], *work[4:]]  # only the third is whole
    reading = whole(clock)
    assert reading.samples() is None and "1 to 2 device activities each, and only 1 of 3 all 2" in reading.error


def test_a_timing_says_over_how_many_calls_the_gpu_counted():
    from kgb.evaluate.timing import Timing

    clock = KernelClock()
    clock.repetitions = 3
    marks = [op(MARK, 0, 10), op(MARK, 20, 30), op(MARK, 40, 50)]
    clock._events = [*marks, kernel(marks[0], 100, 300), kernel(marks[1], 400, 500), kernel(marks[1], 500, 700),
                     kernel(marks[2], 800, 900), kernel(marks[2], 900, 1100)]
    timing = Timing(median_us=9.0, spread=0.0, repeats=3, mode="eager", reading=whole(clock)).counted()
    assert timing.median_us == 0.3 and timing.repeats == 2
    assert "the GPU's count of 2 device activities a call, over the 2 of 3 calls the profile recorded whole" in timing.note


def test_without_a_gpu_the_clock_says_why_and_the_calls_still_run():
    ran = []
    with KernelClock() as clock:
        reading = clock.reading()
        for i in range(3):
            with reading.repetition():
                ran.append(i)
    assert ran == [0, 1, 2] and reading.samples() is None and reading.error


def test_the_clock_does_not_import_the_compiler_stack():
    """torch.profiler.profile looks for torch._inductor, which imports it and torch._dynamo:
    3.8 s of CPU in every judge process on the H200 (session 23), two cores' worth through a
    sweep of twelve judges at a time."""
    import subprocess
    import sys

    code = ("import sys, torch\n"
            "from kgb.evaluate.kernel_clock import KernelClock\n"
            "with KernelClock() as clock, clock.repetition():\n"
            "    torch.ones(4).mul_(2)\n"
            "print(sorted(m for m in ('torch._inductor', 'torch._dynamo') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_a_session_holds_several_measurements_each_read_after_it_ends():
    """The judge's timing turn runs inside one profiler session, started before the turn and
    stopped after it (on the H200, session 25, turns measured beside another process's CUDA
    start took three times as long); each measurement reads its own repetitions, and the
    timing it returned takes the GPU's count only once the session is over."""
    import pytest

    from kgb.evaluate.timing import Timing

    clock = KernelClock()
    clock.running = True  # as inside `with clock:`, without a profiler on this machine
    replay, baseline = clock.reading(), None
    for _ in range(2):
        with replay.repetition():
            pass
    baseline = clock.reading()
    with baseline.repetition():
        pass
    pending = Timing(median_us=9.0, spread=0.0, repeats=2, mode="graph", reading=replay)
    with pytest.raises(RuntimeError, match="still runs"):
        pending.counted()
    clock.running = False
    marks = [op(MARK, 0, 10), op(MARK, 20, 30), op(MARK, 40, 50)]
    clock._events = [*marks, kernel(marks[0], 100, 1_100), kernel(marks[1], 2_000, 3_500),
                     kernel(marks[2], 5_000, 25_000)]
    assert (replay.first, replay.count, baseline.first, baseline.count) == (0, 2, 2, 1)
    counted = pending.counted()
    assert (counted.median_us, counted.repeats, counted.reading) == (1.25, 2, None)
    assert counted.note == "the GPU's count of 1 device activity a call"
    assert baseline.samples() == [20.0]
    clock._events = clock._events[:-1]  # the baseline's kernel lost: its events' time stands, with why
    late = Timing(median_us=23.0, spread=0.0, repeats=1, mode="eager", reading=baseline).counted()
    assert late.median_us == 23.0 and "timed by events" in late.note and "no device activity" in late.note


def test_a_call_with_no_work_on_the_gpu_is_timed_by_its_fastest_call():
    """A view's only time is the events' floor; a host delayed between the two events adds
    to it (views read 7.8-32.6 us in some H200 sweeps by their medians, 1.3 us in most)."""
    from kgb.evaluate.timing import Timing

    clock = KernelClock()
    clock.repetitions = 3
    clock._events = [op(MARK, 0, 10), op(MARK, 20, 30), op(MARK, 40, 50)]  # no device activity
    view = Timing(median_us=18.4, spread=1.6, repeats=3, mode="graph", reading=whole(clock), fastest_us=1.28)
    counted = view.counted()
    assert counted.median_us == 1.28 and counted.reading is None
    assert "no device activity; the fastest of 3 calls" in counted.note


def test_a_finished_sessions_records_outlive_its_clock_for_the_last_few_sessions():
    """Freeing a session's profile is part of what its end cost a view's judge (session 60);
    a judge leaves by os._exit after its verdict, so its last sessions' records are held, not
    freed on its way there. A process running many sessions frees all but the last few."""
    import gc
    import weakref

    from kgb.evaluate import leftovers

    def one_session() -> weakref.ref:
        with KernelClock() as clock, clock.repetition():
            pass
        assert clock._profile is None and not clock.error
        return weakref.ref(leftovers._left[-1][0])

    first = one_session()
    gc.collect()
    assert first() is not None  # its clock is gone; the profile is not
    later = [one_session() for _ in range(leftovers.KEPT)]
    gc.collect()
    assert first() is None and all(ref() is not None for ref in later)
