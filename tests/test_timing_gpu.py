"""The timing protocol on a GPU (kgb.evaluate.timing): what the CPU suite cannot run.
Skipped without CUDA; on a GPU host: `python -m pytest tests/test_timing_gpu.py`."""

from __future__ import annotations

import statistics
import time

import pytest
import torch

from kgb.evaluate import graph_capture, timing
from kgb.evaluate.timing_lock import spin_up

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def _syncs_inside() -> float:
    x = torch.ones(1024, device="cuda")
    return (x * 2).sum().item()  # a host sync: illegal while capturing


def test_random_ops_still_work_after_a_capture_that_failed():
    assert isinstance(graph_capture.capture(_syncs_inside), str)
    assert torch.randn(16, device="cuda").isfinite().all()
    spin_up(0.01)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = torch.randn(16, device="cuda")
    g.replay()
    assert out.isfinite().all()


def test_a_call_that_cannot_be_captured_is_timed_eagerly():
    prepared = timing.prepare(_syncs_inside, warmup=2)
    assert isinstance(prepared.captured, str) and "capture" in prepared.captured.lower()
    t = timing.measure(prepared, repeats=20)
    assert t.mode == "eager" and t.median_us > 0


def test_a_short_call_is_prepared_with_its_graph_and_measured_on_it():
    x = torch.ones(4096, device="cuda")
    prepared = timing.prepare(lambda: x.mul_(1.0), warmup=3)
    assert prepared.captured is not None and not isinstance(prepared.captured, str)
    t = timing.measure(prepared, repeats=30)
    assert t.mode == "graph" and 0 < t.median_us < timing.GRAPH_BELOW_US
    assert prepared.captured is None  # its graph let go of once measured


def test_the_reading_flush_leaves_its_buffer_as_it_was():
    flush = timing.L2Flush(reading=True)
    flush.buffer.fill_(7)
    flush()
    torch.cuda.synchronize()
    assert bool((flush.buffer == 7).all())


def test_the_gpu_s_own_count_leaves_out_the_events_latency_around_a_short_call():
    x = torch.ones(1 << 16, device="cuda")
    by_events = timing.measure(lambda: x.mul_(1.0), repeats=50, protocol=timing.Protocol.CLEAN_L2)
    by_kernels = timing.measure(lambda: x.mul_(1.0), repeats=50, protocol=timing.Protocol.KERNELS)
    assert by_kernels.mode == "graph" and "timed by events" not in by_kernels.note
    assert 0 < by_kernels.median_us < by_events.median_us


def test_the_gpu_s_own_count_adds_up_a_call_s_kernels_and_copies():
    x, y = torch.ones(1 << 22, device="cuda"), torch.empty(1 << 22, device="cuda")

    def one() -> None:
        x.mul_(1.0)

    def three() -> None:
        x.mul_(1.0)
        y.copy_(x)
        x.mul_(1.0)

    t1 = timing.measure(one, repeats=30, no_graph_because="timed eagerly here")
    t3 = timing.measure(three, repeats=30, no_graph_because="timed eagerly here")
    assert "timed by events" not in t1.note + t3.note
    assert 2.0 * t1.median_us < t3.median_us


def test_measurements_in_one_kernel_clock_session_read_the_gpus_count_after_it():
    """The judge's timing turn runs inside one profiler session (kernel_clock.session): each
    measurement's figures are the events' until the session ends, then the GPU's count,
    as a measurement with a session of its own would read it."""
    from kgb.evaluate import kernel_clock

    x, y = torch.ones(1 << 16, device="cuda"), torch.ones(1 << 22, device="cuda")
    alone = [timing.measure(lambda: x.mul_(1.0), repeats=50), timing.measure(lambda: y.mul_(1.0), repeats=50)]
    with kernel_clock.session():
        pending = [timing.measure(lambda: x.mul_(1.0), repeats=50), timing.measure(lambda: y.mul_(1.0), repeats=50)]
        assert all(t.reading is not None for t in pending)
    counted = [t.counted() for t in pending]
    assert all(t.reading is None and "timed by events" not in t.note for t in counted)
    for a, c, p in zip(alone, counted, pending, strict=True):
        assert abs(c.median_us - a.median_us) <= 0.1 * a.median_us + 0.3
        assert c.median_us < p.median_us  # the events' latency left out, as alone


def test_a_call_too_long_for_a_graph_is_not_captured_in_the_turn():
    """A call whose warm-up was too slow to capture before the turn (other judges' work beside
    it) is not captured in the turn when its eager estimate there says it is no short call:
    a capture in a turn took up to a second on a loaded H200 (session 27), for nothing."""
    x, y = torch.ones(1 << 27, device="cuda"), torch.empty(1 << 27, device="cuda")  # some 200 us a call
    fn = lambda: torch.mul(x, 2.0, out=y)  # noqa: E731
    prepared = timing.prepare(fn, warmup=3)
    prepared.captured, prepared.warm_us = None, 10 * timing.CAPTURE_BELOW_US  # as if it had been that slow
    t = timing.measure(prepared, repeats=20)
    assert t.mode == "eager" and "capture" not in t.steps
    assert timing.CAPTURE_IN_TURN_BELOW_US < t.median_us < timing.GRAPH_DECIDES_BELOW_US


def test_a_capture_leaves_the_allocators_cache_alone():
    """torch.cuda.graph empties the caching allocator before it captures, a driver call that
    took seconds on a loaded H200 inside the section other judges' turns waited for; the
    judge's capture keeps the cache and still captures."""
    torch.empty(64 << 20, dtype=torch.uint8, device="cuda")  # freed at once: 64 MB cached
    reserved = torch.cuda.memory_reserved()
    x = torch.ones(4096, device="cuda")
    prepared = timing.prepare(lambda: x * 2, warmup=3)
    assert isinstance(prepared.captured, tuple), prepared.captured
    assert torch.cuda.memory_reserved() >= reserved
    t = timing.measure(prepared, repeats=20)
    assert t.mode == "graph" and t.median_us > 0


def _slow_to_queue() -> None:
    """No device work, and 30 us of the host's time: a view op on a host busy with 16 judges."""
    end = time.perf_counter() + 30e-6
    while time.perf_counter() < end:
        pass


def test_a_short_calls_time_leaves_out_the_hosts_time_to_queue_it():
    """Events around a call with no device work time the host once the GPU has caught up with
    it, and views read 6.6-31 us in some sweeps where they read 1.3 us in most. Judge v16 spins
    the GPU before each start event (LEAD_CYCLES). The flush before each repetition gives the
    host a lead of its own, and how long depends on the GPU's clocks, so neither is flushed here."""
    spin_up(0.05)
    behind = statistics.median(timing._timed(_slow_to_queue, lambda: None, 30))
    ahead = statistics.median(timing._timed(_slow_to_queue, lambda: None, 30, lead=True))
    if behind <= 20:  # seen once on the H200 (session 38): 1.28 us
        pytest.skip(f"without the spin the events read {behind:.2f} us, not the host's 30 us: the driver "
                    "submitted both events together, and this run cannot tell the spin's effect")
    assert ahead < 5, ahead


class _LaggingGraph:
    """A captured graph whose launch the host is slow to queue on all but every fifth
    replay: a judge's host beside 16 others (and no flush to give it a lead)."""

    def __init__(self, graph: torch.cuda.CUDAGraph):
        self.graph, self.replays = graph, 0

    def replay(self) -> None:
        self.replays += 1
        if self.replays % 5:
            end = time.perf_counter() + 300e-6
            while time.perf_counter() < end:
                pass
        self.graph.replay()


def test_a_host_slow_to_launch_a_short_calls_graph_does_not_take_it_off_the_graph():
    """Judge v18: on the H200 (session 37) a view's candidate was timed eagerly at 32.9 us
    where its baseline read 1.25 us on its graph; the graph's estimate had timed the host."""
    spin_up(0.05)
    x = torch.ones(4096, device="cuda")
    prepared = timing.prepare(lambda: x.mul_(1.0), warmup=3)
    graph, output, events = prepared.captured
    lagging = _LaggingGraph(graph)
    prepared.captured, prepared.flush = (lagging, output, events), lambda: None
    t = timing.measure(prepared, repeats=30)
    assert lagging.replays >= 5  # the estimate replayed it
    assert t.mode == "graph", t
