"""PyTorch's kernels that compile at their first use, compiled before the work section that runs
them (judge v37).

Some of PyTorch's own kernels are not in its binary: its jiterator writes them at their first
use in a process, for the dtypes and layout of that call, and compiles them with NVRTC (the
special functions among them: polygamma, i0, erfc, special_entr). The judges keep what they
compiled in a disk cache they share, but a first job on a fresh host meets each such kernel
once, and the compile ran inside the reference's work section: a timing turn asked for then
waited seconds for a section whose GPU work takes milliseconds. In session 65's two first jobs on
an H100, the turns' drains put down to the references of those four operators summed 6.1-6.9 s
(10.4 s in session 64's; benchmarks/gpu_trace.py), their sections taking 0.4-3.5 s each.

So before the section, the reference's call is captured into a CUDA graph that is never
replayed: PyTorch writes, compiles and loads the kernels it launches, and nothing runs on the
GPU, so no section is needed for it. The graph is dropped, and the call then runs in its section
as before, its kernels ready. A call that cannot be captured (it waits for the device, copies
from the host's memory) stops the capture and runs as before, compiling in its section. A spec
that draws random numbers is not captured: a capture takes its share of the generator's state.
Nor may a reference keep GPU values it computed for its later calls (a table made on its first
call and cached): that first call may be a capture, where nothing is computed. On an H100
(session 66, v37 against v36 on one host) the turns' drains put down to reference sections fell
from 8.5 s to 1.5 s a first job.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import torch

# Inputs larger than this are not captured: the capture allocates the call's outputs and
# temporaries beside the real call's, outside the memory the judge reserved; a bench case's
# kernels are those its check cases of the same dtypes and layouts compiled.
MAX_INPUT_BYTES = 64 << 20


def layout(t: torch.Tensor) -> str:
    """The layout as PyTorch's elementwise kernels tell them apart: one that walks memory in
    order (contiguous, or dense in another order, a transpose: TensorIterator permutes it into
    order) runs a vectorised kernel; gaps or a broadcast dimension an indexed one."""
    if t.is_contiguous():
        return "contiguous"
    spans = sorted((stride, size) for size, stride in zip(t.shape, t.stride(), strict=True) if size != 1)
    if any(stride == 0 for stride, _ in spans):
        return "broadcast"
    step = 1
    for stride, size in spans:
        if stride != step:
            return "gapped"
        step *= size
    return "dense"


def alignment(t: torch.Tensor) -> int:
    """The data's alignment up to 16 bytes: a vectorised kernel is compiled per vector width,
    which the pointers' alignment caps (a view that starts one element in gets a narrower one)."""
    address = t.data_ptr()
    return 16 if address % 16 == 0 else address & -address


def signature(args: tuple, kwargs: dict) -> tuple:
    """What decides which kernels a call compiles, as far as the judge can tell: each tensor's
    dtype, rank, layout and alignment, and every other argument's value. (Session 66, an H100:
    keyed by contiguity alone, an expanded (broadcast) check case of i0, erfc and special_entr met a
    transposed one's key and compiled its own kernel in its section, 0.6-1.1 s.)"""
    def key(v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            return ("tensor", v.dtype, v.dim(), layout(v), alignment(v), v.device.type)
        if isinstance(v, list | tuple):
            return (type(v).__name__, *(key(x) for x in v))
        if isinstance(v, dict):
            return ("dict", *sorted((k, key(x)) for k, x in v.items()))
        return ("value", repr(v))
    return key(args), key(kwargs)


def compiled_beforehand(call: Callable[[], Any],
                        side: Callable[[], torch.cuda.Stream] = torch.cuda.Stream) -> bool:
    """`call`, made on the GPU, captured on the stream `side()` gives into a CUDA graph that is
    dropped unreplayed: the kernels it launches compiled and loaded, none run. False where it
    could not be captured."""
    generator = torch.cuda.default_generators[torch.cuda.current_device()]
    try:
        before = generator.clone_state()
    except (AttributeError, NotImplementedError, RuntimeError):
        return False  # a PyTorch that cannot put the generator back after a broken capture: none
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.stream(side()):
            # thread_local: the judge's other threads may call CUDA meanwhile
            graph.capture_begin(capture_error_mode="thread_local")
            try:
                with torch.no_grad():
                    call()
            finally:
                graph.capture_end()  # raises where the call broke the capture
        return True
    except Exception:  # noqa: BLE001 - not capturable: it compiles in its section, as before
        # PyTorch takes the default generator out of its capture mode only once a capture has
        # ended well: left in it, the judge's next draw from it would raise "Offset increment
        # outside graph capture" (session 67, an H100). Its state from before, never
        # capturing, is put back: nothing was drawn from it since.
        generator.graphsafe_set_state(before)
        return False
    finally:
        del graph


class FirstUse:
    """The references a judge has compiled beforehand, by signature: each is captured once."""

    def __init__(self, device: str, random: bool,
                 changing: Callable[[], AbstractContextManager[Any]] = nullcontext):
        """`changing`: held around each capture. The judge's is the GPU's quiet gate, shared
        (kgb.evaluate.quiet_gate): a capture allocates its graph's memory in fresh blocks and
        loads the kernels it compiled outside any work section, as a process's CUDA start and
        a release of memory do, and a measurement that must be alone waits for none of them."""
        self.on = device == "cuda" and not random
        self.changing = changing
        # One stream for all of a judge's captures: PyTorch gives each stream that runs a
        # cuBLAS call a workspace of its own and keeps it, and its pool hands out up to 32.
        self.stream: torch.cuda.Stream | None = None
        self.seen: set[tuple] = set()
        self.captured = 0  # calls captured (the "reference compile" phase says what they took)

    def ready(self, entry: str, reference: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        """`reference(*args, **kwargs)`'s kernels compiled, where this judge has not yet met its
        signature. Its inputs are views of `args`' and `kwargs`' tensors: a capture runs the
        call's host side whole, and a reference that changes a tensor's shape in place changes
        the view's."""
        if not self.on:
            return
        tensors = [v for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor)]
        if any(t.layout != torch.strided for t in tensors):
            return  # sparse or other: no storage to size nor strides to key by; it compiles in its section
        if sum(t.untyped_storage().nbytes() for t in tensors) > MAX_INPUT_BYTES:
            return
        key = (entry, signature(args, kwargs))
        if key in self.seen:
            return
        self.seen.add(key)
        views = tuple(v.view_as(v) if isinstance(v, torch.Tensor) else v for v in args)
        kw = {k: v.view_as(v) if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        with self.changing():
            if compiled_beforehand(lambda: reference(*views, **kw), self.side):
                self.captured += 1

    def side(self) -> torch.cuda.Stream:
        """The stream this judge captures on, made at its first capture."""
        if self.stream is None:
            self.stream = torch.cuda.Stream()
        return self.stream
