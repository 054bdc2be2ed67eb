"""GPU timing of one callable, by the judge: its replay of the candidate's recorded call,
and the baseline, through the same protocol so that their ratio is fair.

Two steps. `prepare` warms the call up (module loads, allocator, library heuristics) and
captures it in a CUDA graph; none of that needs a quiet GPU, so the judge runs it in a work
section. `measure` is the measurement, in the GPU's timing turn: repetitions each preceded
by an L2 flush, median over repetitions. Warm-up is bounded by time (WARMUP_BUDGET_US after
the first call), repetitions by the median's confidence interval and by time
(kgb.evaluate.stopping_rule). Graph-timed calls keep Python and launch overhead out of the
timed region (kgb.evaluate.graph_capture); a call that cannot be captured is timed eagerly,
bracketed by events on its stream.

The judge times with `Protocol.KERNELS` (JUDGE_PROTOCOL): only calls under GRAPH_BELOW_US
(on their graph) are graph-timed; the L2 is flushed by reading a buffer larger than it, so
that the timed call does not pay to write back the flush's dirty lines (`L2Flush`); and a
call's time is how long the GPU was busy with it by the GPU's own count
(kgb.evaluate.kernel_clock), where events around it would add their latency. Events still
decide when the median has settled, and time the calls where the profiler cannot. Inside a
kernel-clock session (the judge's timing turn runs in one) the GPU's count is read once the
session ends, after the turn: `Timing.counted()`.
`Protocol.CLEAN_L2` is the same timed by the events around each call (judge v7), which
bracket a graph's launch, so its launch latency is in the timed region;
`Protocol.CLASSIC` is that with the flush that writes (judges up to v6).
`Protocol.BRACKETED` puts the events inside the graph of any capturable call; only
benchmarks/ncu.py uses it so far, to compare both with Nsight Compute (docs/gpu-results.md:
it gains about 1 us; in one H200 run inside the judge it hung, not yet explained).
The protocols and the L2 flush are in kgb.evaluate.l2_flush.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import torch

from kgb.evaluate import kernel_clock, nvml
from kgb.evaluate.first_call import remembered
from kgb.evaluate.graph_capture import capture, replayed
from kgb.evaluate.kernel_clock import NO_DEVICE_WORK, KernelClock, Reading
from kgb.evaluate.l2_flush import (  # noqa: F401 - L2_FLUSH_BYTES kept importable from here
    JUDGE_PROTOCOL,
    L2_FLUSH_BYTES,
    L2Flush,
    Protocol,
    _flush,
)
from kgb.evaluate.stopping_rule import center, fewest, repetitions, until_settled

GRAPH_BELOW_US = 20.0
# eager estimates under this are captured and decided on the graph's (host launch overhead
# alone can take a few-microsecond call's eager time past GRAPH_BELOW_US)
GRAPH_DECIDES_BELOW_US = 1000.0
WARMUP_BUDGET_US = 50_000.0
# a warmed-up call this long, even slowed by other judges' work beside it, is not going to be
# graph-timed: not worth a capture (and the memory its graph holds until the turn)
CAPTURE_BELOW_US = 20 * GRAPH_DECIDES_BELOW_US
# A call not captured before the turn (its warm-up, slowed by other judges' work, took over
# CAPTURE_BELOW_US) is captured in the turn only if its eager estimate there, on a quiet GPU,
# is under this: one over it would need 80 us of launch gaps for its graph to come under
# GRAPH_BELOW_US, and such a call's warm-up is short enough to have been captured before.
# On the H200 (session 27) 32 captures in turns, of calls whose five estimate calls took
# about a millisecond, took 0.15-0.97 s each, 6.2 s of the 20.5 s that 129 turns measured,
# and all were timed eagerly.
CAPTURE_IN_TURN_BELOW_US = 5 * GRAPH_BELOW_US
# A call this short has each repetition's start event queued behind a spin of the GPU
# (LEAD_CYCLES, ~0.1 ms at the H200's clock) after the L2 flush: the GPU then meets the start
# event only after the host has queued the call and its end event, so that the host's time to
# queue them is not in the events' time. Views (no device activity, timed by events) read
# 1.3 us on a graph in most sweeps and 6.6-31 us in some, where their baselines read 1.3 us
# every time, most likely because the judge's host, beside 16 others, fell behind the flush;
# with the spin they read 1.25-1.31 us in all four sweeps of session 32 (judge v16).
LEAD_BELOW_US = 100.0
LEAD_CYCLES = 200_000


@dataclass(frozen=True)
class Timing:
    median_us: float
    spread: float  # (p80 - p20) / median
    repeats: int
    mode: str  # "eager" or "graph"
    graph: torch.cuda.CUDAGraph | None = field(default=None, repr=False)  # with keep_graph
    graph_output: object = field(default=None, repr=False)  # what the captured call returned
    note: str = ""  # why a short call was not graph-timed, if it was not
    # the GPU's own count of the repetitions, still to be read once its session ends
    # (kgb.evaluate.kernel_clock.session): until `counted()`, the figures are the events'
    reading: Reading | None = field(default=None, repr=False, compare=False)
    # seconds of the host's wall time in each step of the measurement (`measure`), for the
    # GPU trace: what a turn that held the GPU for seconds spent them on
    steps: dict[str, float] = field(default_factory=dict, repr=False, compare=False)
    fastest_us: float | None = None  # the fastest repetition by events
    # the first call on the timed inputs, timed alone where the warm-up ran on other values
    # (kgb.evaluate.first_call): by events, and its reading of the GPU's count
    first_us: float | None = None
    first_reading: Reading | None = field(default=None, repr=False, compare=False)
    repeated_us: float | None = None  # the repetitions' median, once held against the first call
    # the host's clock (time.monotonic) from the first call's launch to its end, for the GPU
    # trace: what else ran on the GPU beside it
    first_span: tuple[float, float] | None = field(default=None, repr=False, compare=False)

    @property
    def by_first_call(self) -> bool:
        """Whether the latency is the first call's (`judged_first`)."""
        return self.repeated_us is not None and bool(remembered(self.first_us, self.repeated_us))

    def judged_first(self, first_us: float | None) -> Timing:
        """This timing, or the first call's where it took far longer than the repetitions:
        `first_us` by the clock that timed them (kgb.evaluate.first_call)."""
        why = remembered(first_us, self.median_us)
        held = replace(self, first_us=first_us, first_reading=None, repeated_us=self.median_us)
        if not why:
            return held
        return replace(held, median_us=first_us, note="; ".join(filter(None, [self.note, why])))

    def counted(self) -> Timing:
        """This timing with the GPU's own count in place of the events' times, once the
        kernel clock's session has ended; the events' times with a note why, where the
        count does not account for every repetition. Then held against its first call's
        (`judged_first`), by the same clock."""
        if self.reading is None:
            return self
        first = self.first_reading.samples() if self.first_reading is not None else None
        on_device = self.reading.samples()
        if on_device is None and self.reading.error == NO_DEVICE_WORK and self.fastest_us is not None:
            # A call with no work on the GPU (a view) has only the events' floor to read, and
            # whatever delays the host between the two events adds to it: by their medians,
            # views read 1.3 us in most sweeps of the H200 and 7.8-32.6 us in some (session
            # 35; its host ran 19 other judges). The fastest call is the floor; since judge
            # v17 it is the time.
            note = f"timed by events: {self.reading.error}; the fastest of {self.repeats} calls"
            return replace(self, median_us=self.fastest_us, reading=None,
                           note="; ".join(filter(None, [self.note, note]))).judged_first(None)
        if on_device is None:
            note = "; ".join(filter(None, [self.note, f"timed by events: {self.reading.error}"]))
            return replace(self, reading=None, note=note).judged_first(self.first_us)
        median, spread = center(on_device)
        # what the count held, in the case's timing mode: a call whose count differs from one
        # run to the next shows whether it counted other work (paged_attention_v2 read 264 us
        # in two sweeps and 436-446 us in two others, session 25, not explained)
        n = self.reading.activities
        counted = f"the GPU's count of {n} device {'activity' if n == 1 else 'activities'} a call"
        if len(on_device) < self.reading.count:  # the others lost a record (kernel_clock.KernelClock.share)
            counted += f", over the {len(on_device)} of {self.reading.count} calls the profile recorded whole"
        return replace(self, median_us=median, spread=spread, repeats=len(on_device), reading=None,
                       note="; ".join(filter(None, [self.note, counted]))).judged_first(first[0] if first else None)


def _timed(run: Callable[[], object], flush: L2Flush, repeats: int, reading: Reading | None = None,
           lead: bool = False, before_each: Callable[[], None] | None = None,
           after_each: Callable[[object], None] | None = None) -> list[float]:
    """Each call's time between events on the stream; under a kernel clock's `reading`, each
    call is one of its repetitions too (the flush before it is not, nor the spin of `lead`:
    LEAD_BELOW_US says why, nor `before_each`, run first, nor `after_each`, given what the
    call returned once its end event is queued)."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    for start, end in zip(starts, ends, strict=True):
        if before_each is not None:
            before_each()
        flush()
        if lead:
            torch.cuda._sleep(LEAD_CYCLES)
        start.record()
        with reading.repetition() if reading is not None else contextlib.nullcontext():
            result = run()
        end.record()
        if after_each is not None:
            after_each(result)
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends, strict=True)]


@dataclass
class Prepared:
    """A call made ready for timing (`prepare`): warmed up, and captured in a CUDA graph
    where it may be graph-timed. `measure` then only measures it."""
    fn: Callable[[], object]
    flush: L2Flush
    protocol: Protocol
    no_graph_because: str
    captured: tuple | str | None  # _capture's result; None: not tried (a long call, or no_graph_because)
    warm_us: float = 0.0  # the last warm-up call, timed beside whatever else ran; 0: not known
    # run before each call, outside the timed region: the state every call starts from
    # (a replay's, judge v22: kgb.evaluate.staged_replay.StagedReplay.before_each)
    before_each: Callable[[], None] | None = None
    # run after each call, outside the timed region, on what it returned (a graph's replay: on
    # the graph's output): the judge's audit of every call (kgb.evaluate.call_audit)
    after_each: Callable[[object], None] | None = None
    # run before each warm-up call instead of `before_each`, where the warm-up runs on other
    # values than the timed calls: then the first call on those is timed alone (a replay's,
    # judge v29: kgb.evaluate.first_call)
    before_warm_up: Callable[[], None] | None = None


def prepare(fn: Callable[[], object], warmup: int = 10, protocol: Protocol = JUDGE_PROTOCOL,
            no_graph_because: str = "",
            section: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext,
            before_each: Callable[[], None] | None = None,
            after_each: Callable[[object], None] | None = None,
            before_warm_up: Callable[[], None] | None = None,
            after_warm_up: Callable[[object], None] | None = None) -> Prepared:
    """What comes before a measurement and needs no quiet GPU: the warm-up calls (module
    loads, allocator, library heuristics) and the graph capture. The judge runs it in a work
    section, beside other judges' GPU work, so that its timing turn, which every judge of the
    GPU waits for, holds only the measurement.

    The capture is tried unless the warmed-up call, timed here under whatever else runs, is
    far too long to be graph-timed (CAPTURE_BELOW_US); `measure` captures in the turn a call
    that turns out short after all.

    The first call, the other warm-up calls and the capture each run in a `section()` of
    their own: a turn asked for meanwhile waits for one of them, not for all (on the H200,
    session 24, the replay's warm-up in one section was what a fifth of the turns' drains
    waited for, a median 0.24-0.29 s).

    With `before_warm_up`, the warm-up calls and the capture start from that instead of
    `before_each`, and are given to `after_warm_up`, not `after_each` (their answers are for
    other values)."""
    flush = _flush(protocol.flush_reads)
    before, after = (before_warm_up, after_warm_up) if before_warm_up is not None else (before_each, after_each)
    first = warm = 0.0
    if warmup > 0:
        with section():
            first = warm = _timed(fn, flush, 1, before_each=before, after_each=after)[0]
    more = min(warmup - 1, int(WARMUP_BUDGET_US / max(first, 1.0)))
    if more > 0:
        with section():
            for _ in range(more - 1):
                if before is not None:
                    before()
                result = fn()
                if after is not None:
                    after(result)
            warm = _timed(fn, flush, 1, before_each=before, after_each=after)[0]  # the last, timed
    bracketed = protocol == Protocol.BRACKETED
    captured = None
    if not no_graph_because and (bracketed or warm < CAPTURE_BELOW_US):
        with section():
            if before is not None:
                before()
            captured = capture(fn, flush if bracketed else None)
    return Prepared(fn, flush, protocol, no_graph_because, captured, warm, before_each, after_each, before_warm_up)


def measure(call: Callable[[], object] | Prepared, repeats: int = 100, warmup: int = 10, keep_graph: bool = False,
            protocol: Protocol = JUDGE_PROTOCOL, no_graph_because: str = "") -> Timing:
    """Median device time of the call in microseconds, inputs prepared outside the timed
    region. A plain callable is prepared first (`prepare`, with `warmup`, `protocol` and
    `no_graph_because`); a Prepared one is measured as it was prepared.

    With keep_graph, a graph-timed call's graph and captured output come back, so that
    the caller can replay it once more on new values and check what it computes. With
    `no_graph_because`, the call is timed eagerly whatever its length, for that reason (a
    call the caller knows cannot be captured).

    Inside a kernel-clock session (`kernel_clock.session`), the timing's figures are the
    events' until the caller takes `counted()` of it after the session."""
    p = call if isinstance(call, Prepared) else prepare(call, warmup, protocol, no_graph_because)
    steps: dict[str, float] = {}
    last = time.monotonic()

    def step(name: str) -> None:
        nonlocal last
        now = time.monotonic()
        steps[name] = steps.get(name, 0.0) + now - last
        last = now

    torch.cuda.synchronize()
    step("synchronize")
    nvml.wait_for_clocks()  # judge v20
    step("clocks")
    # the session the caller runs (its timing turn's), read after it; else one of its own
    own = clock = None
    if p.protocol == Protocol.KERNELS:
        clock = kernel_clock.current()
        if clock is None:
            own = clock = KernelClock()
    with own or contextlib.nullcontext():
        timing = _measured(p, repeats, keep_graph, clock, steps, step)
    if own is not None:
        return timing.counted()
    return timing if timing.reading is not None else timing.judged_first(timing.first_us)


def _measured(p: Prepared, repeats: int, keep_graph: bool, clock: KernelClock | None,
              steps: dict[str, float], step: Callable[[str], None]) -> Timing:
    """`measure` from its estimate on, inside the kernel clock's session `clock` (None: no
    clock, the events' times stand)."""
    fn, flush, bracketed = p.fn, p.flush, p.protocol == Protocol.BRACKETED
    # the estimate picks graph or eager (under GRAPH_DECIDES_BELOW_US) and the repetitions;
    # one call says enough of a call that took GRAPH_DECIDES_BELOW_US when warmed up beside
    # other judges' work (judge v27; CAPTURE_BELOW_US before): five of a 1-20 ms call were
    # some 3 s of a first job's turns on the H200 (session 47's latencies)
    around = {"before_each": p.before_each, "after_each": p.after_each}  # every eager call's
    estimates = 1 if p.warm_us >= GRAPH_DECIDES_BELOW_US else 5
    first_us, first_reading, first_span = None, None, None
    if p.before_warm_up is not None:  # its first call on the timed values, alone (kgb.evaluate.first_call)
        first_reading = clock.reading() if clock is not None else None
        began = time.monotonic()
        first_us = _timed(fn, flush, 1, first_reading, lead=p.warm_us < LEAD_BELOW_US, **around)[0]
        first_span = (began, time.monotonic())
        estimates -= 1
    estimate = statistics.median(([first_us] if first_us is not None else [])
                                 + (_timed(fn, flush, estimates, **around) if estimates else []))
    step("estimate")
    repeats = repetitions(estimate, repeats)
    mode, graph, output, note, events = "eager", None, None, "", None
    if p.no_graph_because and (bracketed or estimate < GRAPH_BELOW_US):
        note = f"eager estimate {estimate:.1f} us; not captured: {p.no_graph_because}"
    elif bracketed or (estimate < GRAPH_DECIDES_BELOW_US
                       and (p.captured is not None or estimate < CAPTURE_IN_TURN_BELOW_US)):
        if p.captured is None and p.before_each is not None:
            p.before_each()
        captured = p.captured if p.captured is not None else capture(fn, flush if bracketed else None)
        step("capture")
        if isinstance(captured, str):
            if estimate < GRAPH_BELOW_US:
                note = f"eager estimate {estimate:.1f} us; graph capture failed: {captured}"
        else:
            graph, output, events = captured
            # a replay of the graph returns nothing: what it wrote is in the captured output
            on_graph_around = {"before_each": p.before_each,
                               "after_each": None if p.after_each is None else lambda _: p.after_each(output)}
            # the fastest of five replays, each after the spin: a host that falls behind can
            # only lengthen a replay's time by events, and on the loaded H200 (session 37) a
            # view's candidate, its graph's median over 20 us, was timed eagerly at 32.9 us
            # where its baseline read 1.25 us on its graph
            on_graph = None if bracketed else min(_timed(graph.replay, flush, 5, lead=True, **on_graph_around))
            step("graph estimate")
            if bracketed or graph_timed(on_graph):
                mode = "graph"
            else:
                graph, output = None, None
    run, run_around = (graph.replay, on_graph_around) if mode == "graph" else (fn, around)
    reading = clock.reading() if clock is not None else None
    # the events' times decide when the median has settled; the clock's replace them
    samples = until_settled(
        lambda n: replayed(graph, *events, n) if mode == "graph" and events
        else _timed(run, flush, n, reading, lead=estimate < LEAD_BELOW_US, **run_around),
        repeats, fewest(estimate))
    step("repetitions")
    median, spread = center(samples)
    if not keep_graph:
        graph, output = None, None
    p.captured = None  # the graph's memory goes with the last reference to it
    timing = Timing(median_us=median, spread=spread, repeats=len(samples), mode=mode, graph=graph,
                    graph_output=output, note=note, reading=reading, steps=steps, fastest_us=min(samples),
                    first_us=first_us, first_reading=first_reading, first_span=first_span)
    return timing


def graph_timed(graph_estimate_us: float) -> bool:
    """Whether the classic protocol times a call on its graph: when the graph says the call
    is short. Decided on the graph, not on the eager estimate, which for a short call is
    the host's launch time: on the H200 a 7 us softmax replayed in Python was estimated at
    over 20 us eagerly in one judgement of three and timed at 34 us."""
    return graph_estimate_us < GRAPH_BELOW_US


