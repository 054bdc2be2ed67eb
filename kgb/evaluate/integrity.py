"""The integrity audit: which ATen ops and which Triton kernels a candidate runs.

Runs inside the worker. A TorchDispatchMode sees every ATen op dispatched while the
candidate is called; patched launch methods count the Triton kernels it starts. Ops that
move or allocate memory are allowed; an op that computes values means PyTorch, not the
candidate's Triton code, produced (part of) the result, and the candidate is rejected.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from torch.utils._python_dispatch import TorchDispatchMode

# Allocation, views, layout copies and fills: none of them computes an operator's values.
# Packet names (any overload). A spec may deny some (aten::clone's spec denies clone) or
# allow more.
ALLOWED_OPS = frozenset(
    f"aten::{name}"
    for name in """
    empty empty_like empty_strided new_empty new_empty_strided new_zeros zeros zeros_like
    zero_ fill_ view _unsafe_view reshape as_strided t transpose permute expand unsqueeze squeeze
    select slice narrow split split_with_sizes unbind alias detach lift_fresh clone copy_
    contiguous _reshape_alias unfold view_as _local_scalar_dense is_nonzero sym_size sym_stride
    sym_numel sym_storage_offset promote_types result_type
    """.split()
)


@dataclass
class Audit:
    """What the candidate ran: ATen ops outside kernel launches, and Triton launches."""

    torch_ops: list[str] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)
    in_launch: int = 0

    def violations(self, allowed: frozenset[str], denied: frozenset[str]) -> list[str]:
        bad = []
        for op in dict.fromkeys(self.torch_ops):
            packet = op.split(".")[0]
            if packet in denied or op in denied or (packet not in allowed and op not in allowed):
                bad.append(op)
        return bad


class _Recorder(TorchDispatchMode):
    def __init__(self, audit: Audit):
        super().__init__()
        self.audit = audit

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # The interpreter's launcher copies tensors to and from the host: not the candidate's ops.
        if not self.audit.in_launch:
            self.audit.torch_ops.append(func._schema.name + (f".{func._overloadname}" if func._overloadname != "default" else ""))
        return func(*args, **(kwargs or {}))


_current: list[Audit] = []


def _patch_launchers() -> None:
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
    _patch_launchers()
    audit = Audit()
    _current.append(audit)
    try:
        with _Recorder(audit):
            yield audit
    finally:
        _current.pop()

