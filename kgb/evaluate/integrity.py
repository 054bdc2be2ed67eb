"""The integrity audit: which ATen ops and which Triton kernels a candidate runs.

Runs inside the candidate process. Two independent observers see the ATen ops of a call:
a TorchDispatchMode (with overload names), and PyTorch's legacy profiler, whose
RecordFunction callbacks sit below the Python dispatcher, so popping the mode or
disabling Python dispatch hides nothing from it. Ops inside Triton launches are recorded
too: a launch hook or Python called from an interpreted kernel is candidate code. Ops that
move, convert or allocate memory are allowed; an op that computes values means PyTorch,
not the candidate's Triton code, produced (part of) the result, and the candidate is
rejected. Patched launch methods count the Triton kernels it starts. A profiler that
stopped, or was swapped for another, before the end of the block is tampering.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

from torch.utils._python_dispatch import TorchDispatchMode

from kgb.evaluate import bounds

# Allocation, views, layout copies and fills: none of them computes an operator's values.
# Packet names (any overload). A spec may deny some (aten::clone's spec denies clone) or
# allow more.
ALLOWED_OPS = frozenset(
    f"aten::{name}"
    for name in """
    empty empty_like empty_strided new_empty new_empty_strided new_zeros zeros zeros_like
    zero_ fill_ view _unsafe_view reshape as_strided t transpose permute expand unsqueeze squeeze
    select slice narrow split split_with_sizes unbind alias detach lift_fresh lift_fresh_copy clone
    copy_ contiguous _reshape_alias unfold view_as _local_scalar_dense is_nonzero sym_size
    sym_stride sym_numel sym_storage_offset promote_types result_type set_ resize_
    to _to_copy type_as _has_compatible_shallow_copy_type resolve_conj resolve_neg
    """.split()
)

# Values a call may copy from a GPU's memory to the host's, all its copies together: a grid or a
# result's length read as a scalar (aten::index's one `.item()`) is what the known-good
# solutions read. More is the answer computed on the host (`.cpu()`, `.tolist()` into numpy or
# Python), which on a GPU no value provenance sees (the CPU's is kgb.evaluate.provenance).
HOST_READ_LIMIT = 64


@dataclass
class Audit:
    """What the candidate ran: ATen ops outside kernel launches, and Triton launches."""

    torch_ops: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)  # pre-run hooks found on launched kernels
    in_launch: int = 0
    host_reads: int = 0  # values copied from a device's memory to the host's (host_read_elements)

    def violations(self, allowed: frozenset[str], denied: frozenset[str]) -> list[str]:
        bad = []
        for op in dict.fromkeys(self.torch_ops):
            if op.split("::")[0] not in ("aten", "prims"):
                # A custom op (torch.library.triton_op, say) is judged by what it runs inside:
                # the profiler reports its leaf ATen ops.
                continue
            packet = op.split(".")[0]
            if packet in denied or op in denied or (packet not in allowed and op not in allowed):
                bad.append(op)
        return bad


# Copies the judge's own code makes inside a candidate's call: the interpreter's of a launch's
# tensors to host buffers and back (interpreter.py), the recorder's snapshots of tensors made
# before a recorded call (recording.py). Both observers leave out what runs inside
# `judges_transfer`: the candidate did not ask for it. (Candidate code can enter it too, as it
# can reach everything else of this process: the op audit is the candidate's to forge, and on
# a GPU the judge's replay of the recorded call is what a verdict stands on.)
TRANSFER_MARK = "kgb::judges-transfer"
_in_transfer = [0]


@contextlib.contextmanager
def judges_transfer() -> Iterator[None]:
    from torch.autograd.profiler import record_function

    _in_transfer[0] += 1
    try:
        with record_function(TRANSFER_MARK):
            yield
    finally:
        _in_transfer[0] -= 1


class _Recorder(TorchDispatchMode):
    def __init__(self, audit: Audit):
        super().__init__()
        self.audit = audit

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not _in_transfer[0]:
            self.audit.torch_ops.append(func._schema.name + (f".{func._overloadname}" if func._overloadname != "default" else ""))
        out = func(*args, **(kwargs or {}))
        bounds.made(out)
        if not _in_transfer[0]:
            self.audit.host_reads += host_read_elements(func, args, out)
        return out


def host_read_elements(func, args: tuple, out: object) -> int:
    """How many values an op copied from a device's memory into the host's."""
    import torch

    def off_host(t: object) -> bool:
        return isinstance(t, torch.Tensor) and t.device.type != "cpu"

    def on_host(t: object) -> bool:
        return isinstance(t, torch.Tensor) and t.device.type == "cpu"

    name = func._schema.name
    if name == "aten::_local_scalar_dense":  # .item(), and tolist() of a one-value tensor
        return 1 if off_host(args[0]) else 0
    if name == "aten::_to_copy" and off_host(args[0]) and on_host(out):  # .cpu(), .to("cpu")
        return args[0].numel()
    if name == "aten::copy_" and len(args) > 1 and on_host(args[0]) and off_host(args[1]):
        return args[1].numel()
    return 0


_current: list[Audit] = []


def patch_launchers() -> None:
    """Wrap Triton's launch entry points once, so that every launch is counted."""
    from triton.runtime import jit

    classes = [jit.JITFunction]
    try:
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    except ImportError:
        pass
    for cls in classes:
        if getattr(cls.run, "_kgb_counted", False):
            continue
        original = cls.run

        def run(self, *args, _original=original, **kwargs):
            audit = _current[-1] if _current else None
            if audit is None:
                return _original(self, *args, **kwargs)
            if not kwargs.get("warmup", False):
                audit.kernels.append(_kernel_name(self))
            if getattr(self, "pre_run_hooks", None):
                audit.hooks.append(f"a pre-run hook on kernel {_kernel_name(self)}")
            audit.in_launch += 1
            try:
                return _original(self, *args, **kwargs)
            finally:
                audit.in_launch -= 1

        run._kgb_counted = True  # type: ignore[attr-defined]
        cls.run = run


def _kernel_name(fn) -> str:
    inner = getattr(fn, "fn", fn)
    return getattr(inner, "__name__", type(fn).__name__)


@contextlib.contextmanager
def audited() -> Iterator[Audit]:
    """Record the ATen ops and Triton launches of the code run inside the block."""
    patch_launchers()
    audit = Audit()
    _current.append(audit)
    try:
        with _Recorder(audit):
            yield audit
    finally:
        _current.pop()



@dataclass
class Profiled:
    """ATen ops seen by the profiler (leaf ops: what actually ran), and whether the
    profiler was still running at the end (a candidate that stops it is tampering)."""

    ops: list[str] = field(default_factory=list)
    intact: bool = True


def _guard_legacy_stop() -> None:
    """Make torch's legacy profiler stop safe to call while the audit's profiler runs.

    torch.autograd.profiler.profile runs on Kineto's state even with use_kineto=False, and
    torch's _disable_profiler_legacy casts whatever profiler state is active to its legacy
    type without checking it: on Kineto's state it locks a mutex that is not one and then
    raises "Invalid argument", aborts in glibc, or waits forever (that last one ran an
    evaluation into its timeout). The replacement stops a Kineto profiler through Kineto's
    own stop, which checks the state it stops, so the candidate gets what it asked for and
    the audit sees a stopped profiler. A legacy profiler, or none, is left to torch, which
    handles both correctly."""
    from torch._C import _autograd
    from torch._C._profiler import ActiveProfilerType

    original = _autograd._disable_profiler_legacy
    if getattr(original, "_kgb_guarded", False):
        return

    def _disable_profiler_legacy(*args, **kwargs):
        if _autograd._profiler_type() in (ActiveProfilerType.LEGACY, ActiveProfilerType.NONE):
            return original(*args, **kwargs)
        _autograd._disable_profiler()
        return []

    _disable_profiler_legacy._kgb_guarded = True  # type: ignore[attr-defined]
    # torch.autograd and torch.autograd.profiler_legacy import the function by name: every
    # module loaded so far that holds it gets the replacement, later imports find it on
    # torch._C._autograd.
    for module in list(sys.modules.values()):
        names = getattr(module, "__dict__", {})
        for name, value in list(names.items()):
            if value is original:
                setattr(module, name, _disable_profiler_legacy)


@contextlib.contextmanager
def recorded_by_profiler() -> Iterator[Profiled]:
    """Record the leaf ATen ops run inside the block, whatever the Python dispatch state."""
    import warnings

    import torch
    from torch.autograd import profiler

    _guard_legacy_stop()
    found = Profiled()
    # A mark only this block knows, recorded as the profiler starts: a profiler that was
    # stopped and started again (or another one) ends without it. _RecordFunctionFast
    # records it without a dispatched op, which the dispatch mode would report.
    mark = f"kgb::audit-{os.urandom(8).hex()}"
    prof = profiler.profile(use_kineto=False, record_shapes=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prof.__enter__()
    with torch._C._profiler._RecordFunctionFast(mark):
        pass
    try:
        yield found
    finally:
        try:
            # Stopping a profiler that is no longer running only logs a warning and returns no
            # events, which would read as a call that ran no op: ask first.
            running = torch._C._autograd._profiler_enabled()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                prof.__exit__(None, None, None)
            events = prof.function_events
            found.intact = running and any(e.name == mark for e in events)
            found.ops = [e.name for e in events
                         if not e.cpu_children and e.name.startswith("aten::") and not _under_transfer(e)]
        except Exception:  # noqa: BLE001 - the profiler was stopped or replaced from inside
            found.intact = False


def _under_transfer(event) -> bool:
    parent = event.cpu_parent
    while parent is not None:
        if parent.name == TRANSFER_MARK:
            return True
        parent = parent.cpu_parent
    return False
