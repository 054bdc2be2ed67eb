"""A spare judge: a judge process started before its request, waiting with its candidate
process forked, confined and on the GPU.

Starting a judge costs most of what judging a trivial candidate costs: its candidate
process forks, confines itself and starts CUDA, and the judge starts CUDA after it.
An agent calls the judge dozens of times per operator, one call after another, and waits
for each. So the engine keeps a spare started for the next evaluation of the same settings
(kgb.evaluate.engine): its workspace, environment and limits are fixed when it starts, and
nothing of the candidate exists until the request comes, so a spare is exactly what a
fresh judge would have been, started earlier.
"""

from __future__ import annotations

import json
import os
import select
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgb.evaluate.candidate_process import CandidateProcess
    from kgb.evaluate.sandbox import Limits


def serve_spare(order: dict, orders_fd: int, done_fd: int) -> None:
    """In a judge child of the engine (its log and environment set): start what `order`
    describes, wait on `orders_fd` for the one request it will serve ({"request": path}),
    then judge it. `done_fd` is kept for the engine's word that the verdict is written."""
    # the engine's descriptors (its wake-up pipe, other spares' order pipes) are not ours:
    # a spare holding another's order pipe open would keep it waiting after it is let go
    signal.set_wakeup_fd(-1)
    keep = sorted((orders_fd, done_fd))
    os.closerange(3, keep[0])
    os.closerange(keep[0] + 1, keep[1])
    os.closerange(keep[1] + 1, os.sysconf("SC_OPEN_MAX"))
    from kgb.evaluate.judge import limits_of, serve_request

    workspace = Path(order["workspace"])
    workspace.mkdir(parents=True, exist_ok=True)
    started = start(order["device"], workspace, limits_of(order), order.get("quiet_gate"),
                    asked=lambda: _waiting(orders_fd))
    request = _next_order(orders_fd)
    if request is None:  # the engine is gone, or let this spare go
        started.close()
        return
    serve_request(Path(request["request"]), started)


def start(device: str, workspace: Path, limits: Limits, gate: str | None = None,
          asked: Callable[[], bool] | None = None) -> CandidateProcess:
    """What a spare starts before its request (benchmarks/spare_memory.py measures what it
    holds): its candidate process, forked, confined and on the GPU, then this process's own
    CUDA context, the judge's clock and the kernels its draws and comparisons use; each start
    holding the GPU's quiet gate shared (`gate`, kgb.evaluate.quiet_gate). The comparison
    kernels are warmed only until `asked()` says the request has come."""
    from kgb.evaluate import quiet_gate
    from kgb.evaluate.judge import _keep_out_of_the_workspace, start_candidate

    started = start_candidate(device, workspace, limits, gate)
    _keep_out_of_the_workspace(workspace.parent / "judge")
    if device == "cuda":
        import torch

        from kgb.evaluate import comparison_kernels, draws, kernel_clock
        from kgb.evaluate.timing_lock import trace

        began = time.monotonic()
        with quiet_gate.changing(gate):
            torch.empty(1, device="cuda")  # this process's own CUDA context, after its candidate forked
            kernel_clock.warm_up()  # the judge's clock, ready before the request
            draws.warm_up(device)
        comparing = time.monotonic()
        cut_short = comparison_kernels.warm_up(device, until=asked)  # no start or release of memory: outside the gate
        # traced (benchmarks/gpu_trace.py): on a host whose Triton cache is empty, what the
        # comparison kernels' compiles cost the spares of a job's start
        ended = time.monotonic()
        trace("warm-up", began, began, ended, comparisons=ended - comparing, cut_short=cut_short)
    return started


def _waiting(fd: int) -> bool:
    """Whether the engine has written to the order pipe `fd` (the request, or its end)."""
    return bool(select.select([fd], [], [], 0)[0])


def _next_order(fd: int) -> dict | None:
    """The one line the engine writes; None at end of file."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = os.read(fd, 65536)
        if not chunk:
            return None
        data += chunk
    os.close(fd)
    return json.loads(data)
