"""GPU timing of one callable. Runs in the candidate process (the candidate) and in the judge (the baseline); the candidate and the baseline go
through the same protocol so their ratio is fair.

Protocol: warm-up calls (compilation, autotuning, allocator), then repetitions each
preceded by an L2 flush, bracketed by device events, median over repetitions. Calls
shorter than GRAPH_BELOW_US are captured in a CUDA graph and the replays are timed, so
that Python and launch overhead does not swamp a kernel of a few microseconds.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

GRAPH_BELOW_US = 20.0
L2_FLUSH_BYTES = 256 * 1024 * 1024  # well over the H200's 60 MB of L2


@dataclass(frozen=True)
class Timing:
    median_us: float
    spread: float  # (p80 - p20) / median
    repeats: int
    mode: str  # "eager" or "graph"
    graph: torch.cuda.CUDAGraph | None = field(default=None, repr=False)  # with keep_graph
    graph_output: object = field(default=None, repr=False)  # what the captured call returned
    note: str = ""  # why a short call was not graph-timed, if it was not
    outlived_us: float | None = None  # set when the call's GPU work outlives it (see _outlives)


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


def measure(fn: Callable[[], object], repeats: int = 100, warmup: int = 10, keep_graph: bool = False) -> Timing:
    """Median device time of fn() in microseconds, inputs prepared outside the timed region.

    With keep_graph, a graph-timed call's graph and captured output come back, so that
    the caller can replay it once more on new values and check what it computes."""
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    estimate = statistics.median(_timed(fn, flush, 5))
    mode, run, graph, output, note = "eager", fn, None, None, ""
    if estimate < GRAPH_BELOW_US:
        captured = _capture(fn)
        if isinstance(captured, str):
            note = f"eager estimate {estimate:.1f} us; graph capture failed: {captured}"
        else:
            graph, output = captured
            mode, run = "graph", graph.replay
    # keep a slow kernel's timing to a few seconds
    repeats = max(10, min(repeats, int(2e6 / max(estimate, 1.0))))
    samples = sorted(_timed(run, flush, repeats))
    median = statistics.median(samples)
    spread = (_quantile(samples, 0.8) - _quantile(samples, 0.2)) / median if median else 0.0
    outlived = _outlives(fn, median) if mode == "eager" else None
    if not keep_graph:
        graph, output = None, None
    return Timing(median_us=median, spread=spread, repeats=repeats, mode=mode, graph=graph, graph_output=output,
                  note=note, outlived_us=outlived)


def _outlives(fn: Callable[[], object], median_us: float) -> float | None:
    """The host-measured time of a call with the whole device synchronised, if it is far
    beyond the stream-event median: work left running on another stream after the call
    returned (which the events on the current stream do not see). None if plausible."""
    import time

    synced = []
    for _ in range(5):
        torch.cuda.synchronize()
        started = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        synced.append((time.perf_counter() - started) * 1e6)
    host = statistics.median(synced)
    return host if host > 2.5 * median_us + 30.0 else None


def _capture(fn: Callable[[], object]) -> tuple[torch.cuda.CUDAGraph, object] | str:
    """A CUDA graph of one call and the call's output, or why it could not be captured."""
    try:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()  # a warm-up on the capture stream, as CUDA graphs require
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            output = fn()
        graph.replay()
        torch.cuda.synchronize()
        return graph, output
    except Exception as exc:  # noqa: BLE001 - any capture failure falls back to eager timing
        torch.cuda.synchronize()
        return f"{type(exc).__name__}: {str(exc)[:200]}"
