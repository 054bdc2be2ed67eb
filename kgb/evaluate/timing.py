"""GPU timing of one callable. Runs in the candidate process (the candidate) and in the judge (the baseline); the candidate and the baseline go
through the same protocol so their ratio is fair.

Warm-up calls (compilation, autotuning, allocator), then repetitions each preceded by an L2
flush, median over repetitions. Both are bounded by what they buy: warm-up by time
(WARMUP_BUDGET_US after the first call), repetitions by the median's 95% confidence
interval, which stops them once it is within CI_HALF_WIDTH of the median (at least
MIN_REPEATS). A slow kernel is steady: twenty samples of a 50 ms GEMM say what a hundred
say, and the GPU's timing turn, which every judge of the GPU waits for, is freed sooner. Graph-timed calls keep Python and launch overhead out of the
timed region, which would swamp a kernel of a few microseconds; a call that cannot be
captured is timed eagerly, bracketed by events on its stream.

The judge times with `Protocol.CLASSIC`: only calls under GRAPH_BELOW_US (on their graph)
are graph-timed, and the events bracket the graph's launch, so its launch latency is in
the timed region.
`Protocol.BRACKETED` puts the events inside the graph of any capturable call; only
benchmarks/ncu.py uses it so far, to compare both with Nsight Compute (docs/gpu-results.md:
it gains about 1 us; in one H200 run inside the judge it hung, not yet explained).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import torch

GRAPH_BELOW_US = 20.0
# eager estimates under this are captured and decided on the graph's (host launch overhead
# alone can take a few-microsecond call's eager time past GRAPH_BELOW_US)
GRAPH_DECIDES_BELOW_US = 1000.0
L2_FLUSH_BYTES = 256 * 1024 * 1024  # well over the H200's 60 MB of L2
WARMUP_BUDGET_US = 50_000.0
MIN_REPEATS = 20
CI_HALF_WIDTH = 0.005  # of the median


class Protocol(StrEnum):
    BRACKETED = "bracketed"  # events inside the graph of every capturable call
    CLASSIC = "classic"  # graph only under GRAPH_BELOW_US, its launch timed from outside


@dataclass(frozen=True)
class Timing:
    median_us: float
    spread: float  # (p80 - p20) / median
    repeats: int
    mode: str  # "eager" or "graph"
    graph: torch.cuda.CUDAGraph | None = field(default=None, repr=False)  # with keep_graph
    graph_output: object = field(default=None, repr=False)  # what the captured call returned
    note: str = ""  # why a short call was not graph-timed, if it was not


def _quantile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def _timed(run: Callable[[], object], flush: torch.Tensor, repeats: int) -> list[float]:
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    for start, end in zip(starts, ends, strict=True):
        flush.zero_()
        start.record()
        run()
        end.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends, strict=True)]


def measure(fn: Callable[[], object], repeats: int = 100, warmup: int = 10, keep_graph: bool = False,
            protocol: Protocol = Protocol.CLASSIC, no_graph_because: str = "") -> Timing:
    """Median device time of fn() in microseconds, inputs prepared outside the timed region.

    With keep_graph, a graph-timed call's graph and captured output come back, so that
    the caller can replay it once more on new values and check what it computes. With
    `no_graph_because`, the call is timed eagerly whatever its length, for that reason (a
    call the caller knows cannot be captured)."""
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    first = _timed(fn, flush, 1)[0] if warmup > 0 else 0.0
    for _ in range(min(warmup - 1, int(WARMUP_BUDGET_US / max(first, 1.0)))):
        fn()
    torch.cuda.synchronize()
    estimate = statistics.median(_timed(fn, flush, 5))
    # keep a slow kernel's timing to a few seconds
    repeats = max(10, min(repeats, int(2e6 / max(estimate, 1.0))))
    mode, graph, output, note = "eager", None, None, ""
    samples: list[float] = []
    bracketed = protocol == Protocol.BRACKETED
    if no_graph_because and (bracketed or estimate < GRAPH_BELOW_US):
        note = f"eager estimate {estimate:.1f} us; not captured: {no_graph_because}"
    elif bracketed or estimate < GRAPH_DECIDES_BELOW_US:
        captured = _capture(fn, flush if bracketed else None)
        if isinstance(captured, str):
            if estimate < GRAPH_BELOW_US:
                note = f"eager estimate {estimate:.1f} us; graph capture failed: {captured}"
        else:
            graph, output, events = captured
            on_graph = None if bracketed else statistics.median(_timed(graph.replay, flush, 5))
            if bracketed or graph_timed(on_graph):
                mode = "graph"
                samples = _until_settled(
                    lambda n: _replayed(graph, *events, n) if events else _timed(graph.replay, flush, n), repeats)
            else:
                graph, output = None, None
    if mode == "eager":
        samples = _until_settled(lambda n: _timed(fn, flush, n), repeats)
    samples.sort()
    median = statistics.median(samples)
    spread = (_quantile(samples, 0.8) - _quantile(samples, 0.2)) / median if median else 0.0
    if not keep_graph:
        graph, output = None, None
    return Timing(median_us=median, spread=spread, repeats=len(samples), mode=mode, graph=graph, graph_output=output,
                  note=note)


def own_clock(fn: Callable[[], object], repeats: int) -> list[float]:
    """Microseconds of `repeats` eager calls, each between two events on the current
    stream: no L2 flush, no graph, no warm-up. The candidate process's own clock, which is
    reported beside the judge's latency and never taken for it: its calls run in a work
    section, which every timing turn of the GPU waits to drain, so they are few and plain."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    for start, end in zip(starts, ends, strict=True):
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends, strict=True)]


def graph_timed(graph_estimate_us: float) -> bool:
    """Whether the classic protocol times a call on its graph: when the graph says the call
    is short. Decided on the graph, not on the eager estimate, which for a short call is
    the host's launch time: on the H200 a 7 us softmax replayed in Python was estimated at
    over 20 us eagerly in one judgement of three and timed at 34 us."""
    return graph_estimate_us < GRAPH_BELOW_US


def _until_settled(sample: Callable[[int], list[float]], repeats: int) -> list[float]:
    """Samples in batches until the median has settled (`settled`) or `repeats` are taken."""
    samples = sample(min(repeats, MIN_REPEATS))
    while len(samples) < repeats and not settled(samples):
        samples += sample(min(10, repeats - len(samples)))
    return samples


def settled(samples: list[float]) -> bool:
    """Whether the median's 95% confidence interval (order statistics n/2 -+ 0.98 sqrt(n))
    is within CI_HALF_WIDTH of it, over at least MIN_REPEATS samples."""
    n = len(samples)
    if n < MIN_REPEATS:
        return False
    ordered = sorted(samples)
    low = ordered[max(0, math.floor(n / 2 - 0.98 * math.sqrt(n)))]
    high = ordered[min(n - 1, math.ceil(n / 2 + 0.98 * math.sqrt(n)))]
    median = statistics.median(ordered)
    return median > 0 and (high - low) / 2 <= CI_HALF_WIDTH * median


def _replayed(graph: torch.cuda.CUDAGraph, start: torch.cuda.Event, end: torch.cuda.Event, repeats: int) -> list[float]:
    """The call's time in each of `repeats` replays, read from the events inside the graph."""
    samples = []
    for _ in range(repeats):
        graph.replay()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0)
    return samples


def _capture(fn: Callable[[], object], flush: torch.Tensor | None = None
             ) -> tuple[torch.cuda.CUDAGraph, object, tuple[torch.cuda.Event, torch.cuda.Event] | None] | str:
    """A CUDA graph of one call, the call's output, and with `flush` the two events that
    bracket it; or why it could not be captured. With `flush` the graph is: the L2 flush, an
    event, the call, an event. The events are external graph nodes, so that they time the
    call inside each replay (a plain event would become an internal dependency of the
    capture and time nothing)."""
    try:
        events = None
        if flush is not None:
            events = (torch.cuda.Event(enable_timing=True, external=True),
                      torch.cuda.Event(enable_timing=True, external=True))
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()  # a warm-up on the capture stream, as CUDA graphs require
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            if events:
                flush.zero_()
                events[0].record()
            output = fn()
            if events:
                events[1].record()
        graph.replay()
        torch.cuda.synchronize()
        if events:
            events[0].elapsed_time(events[1])  # a driver that cannot time events in graphs says so here
        return graph, output, events
    except Exception as exc:  # noqa: BLE001 - any capture failure falls back to eager timing
        torch.cuda.synchronize()
        return f"{type(exc).__name__}: {str(exc)[:200]}"
