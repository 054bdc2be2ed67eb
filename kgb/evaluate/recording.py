"""A call's GPU work recorded as data, in the candidate process (the candidate's side of
kgb.evaluate.replay, which says why).

Every Triton launch (the compiled kernel's binary and metadata, its grid, its arguments)
and every ATen op that allocates or writes memory is noted in order, each tensor named by
the storage it lives in: an input by the codec's id, an allocation by its order in the
call, a tensor made before the call by value (a snapshot of its bytes). Views are not
steps: a replay names tensors by storage anyway.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from kgb.evaluate import tensor_storage
from kgb.evaluate.integrity import judges_transfer

MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024  # tensors the candidate made before the call, sent by value


class Unreplayable(Exception):
    """The call did something the judge cannot replay; the reason is the message."""



@dataclass
class Recording:
    kernels: dict[str, dict] = field(default_factory=dict)
    steps: list[dict] = field(default_factory=list)
    snapshots: list[dict] = field(default_factory=list)
    result: Any = None
    problem: str | None = None  # why the call cannot be replayed

    def as_json(self) -> dict:
        if self.problem:
            return {"problem": self.problem}
        return {"kernels": self.kernels, "steps": self.steps, "snapshots": self.snapshots, "result": self.result}


class Recorder(TorchDispatchMode):
    """Records one call. `known` names the judge's input storages (the codec's ids)."""

    def __init__(self, known: tensor_storage.Storages):
        super().__init__()
        self.known = known
        self.rec = Recording()
        self._new: dict[int, int] = {}  # storage _cdata -> index of allocation in the call
        self._outside: dict[int, int] = {}  # storage _cdata -> index in snapshots
        self._held: list[torch.UntypedStorage] = []  # alive, so no _cdata is reused in the call
        self._snapshot_bytes = 0
        self._busy = False  # our own ops (a snapshot's copy) are not the candidate's

    # --- tensors named by storage
    def ref(self, t: torch.Tensor) -> dict:
        if type(t) is not torch.Tensor:
            raise Unreplayable(f"a {type(t).__name__} cannot be replayed")
        st = t.untyped_storage()
        sid = self.known.id_of(st)
        if sid is not None:
            where = ["in", sid]
        elif st._cdata in self._new:
            where = ["new", self._new[st._cdata]]
        else:
            if st._cdata not in self._outside:
                self._outside[st._cdata] = self._snapshot(st)
            where = ["outside", self._outside[st._cdata]]
        return {"s": where, **tensor_storage.layout(t)}

    def _snapshot(self, st: torch.UntypedStorage) -> int:
        self._snapshot_bytes += st.nbytes()
        if self._snapshot_bytes > MAX_SNAPSHOT_BYTES:
            raise Unreplayable(f"the call uses over {MAX_SNAPSHOT_BYTES >> 20} MB of tensors made before it")
        # the recorded call is audited (judge v35): its audit must not count this copy to the
        # host as the candidate's reading its values back
        with judges_transfer():
            if st.device.type == "cuda":
                torch.cuda.synchronize()
            data = tensor_storage.host_bytes(st).clone()
        self._held.append(st)
        self.rec.snapshots.append({"device": st.device.type, "data": data})
        return len(self.rec.snapshots) - 1

    def value(self, v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            return {"t": self.ref(v)}
        if v is None or isinstance(v, bool | int | float | str):
            return {"v": v}
        if isinstance(v, list | tuple):
            return {"list" if isinstance(v, list) else "tuple": [self.value(x) for x in v]}
        if isinstance(v, torch.dtype):
            return {"dtype": tensor_storage.dtype_name(v)}
        if isinstance(v, torch.device):
            return {"device": v.type}
        if isinstance(v, torch.memory_format):
            return {"memory_format": str(v).removeprefix("torch.")}
        if isinstance(v, torch.layout) and v == torch.strided:
            return {"layout": "strided"}
        raise Unreplayable(f"an argument of type {type(v).__name__} cannot be replayed")

    # --- ATen ops
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self._busy or self.rec.problem or not _writes_or_allocates(func):
            return func(*args, **kwargs)
        try:
            step = {"op": func.name(), "args": self.value(list(args)),
                    "kwargs": {str(k): self.value(v) for k, v in kwargs.items()}}
        except Unreplayable as exc:
            self.rec.problem = str(exc)
            return func(*args, **kwargs)
        out = func(*args, **kwargs)
        leaves, _ = tree_flatten(out)
        step["new"] = []
        for i, leaf in enumerate(leaves):
            if isinstance(leaf, torch.Tensor):
                st = leaf.untyped_storage()
                if self.known.id_of(st) is None and st._cdata not in self._new and st._cdata not in self._outside:
                    self._new[st._cdata] = len(self._new)
                    self._held.append(st)
                    step["new"].append(i)
        self.rec.steps.append(step)
        return out

    # --- Triton launches (called by the patched CompiledKernel.run)
    def launch(self, kernel: Any, grid: tuple[int, int, int], args: tuple) -> None:
        if self.rec.problem:
            return
        self._busy = True
        try:
            key = str(kernel.hash)
            if key not in self.rec.kernels:
                self.rec.kernels[key] = _describe(kernel)
            self.rec.steps.append({"launch": key, "grid": [int(g) for g in grid],
                                   "args": [self._launch_arg(a) for a in args]})
        except Unreplayable as exc:
            self.rec.problem = str(exc)
        finally:
            self._busy = False

    def _launch_arg(self, a: Any) -> Any:
        if isinstance(a, torch.Tensor):
            return {"t": self.ref(a)}
        if a is None or isinstance(a, bool | int | float):
            return {"v": a}
        if isinstance(a, tuple):
            return {"tuple": [self._launch_arg(x) for x in a]}
        if type(a).__name__ == "constexpr" or isinstance(a, str) or type(a).__name__ == "dtype":
            return {"v": None}  # a constexpr: compiled into the binary, ignored by the launcher
        raise Unreplayable(f"a launch argument of type {type(a).__name__} cannot be replayed")


def _writes_or_allocates(func: Any) -> bool:
    """Views and metadata queries do no GPU work: a replay names tensors by storage anyway."""
    returns = func._schema.returns
    if func._schema.is_mutable:
        return True
    if not returns:
        return False
    aliases = [r.alias_info for r in returns]
    return any(a is None for a in aliases) and any(
        isinstance(r.type, torch.TensorType) or "Tensor" in str(r.type) for r in returns)


def _describe(kernel: Any) -> dict:
    src = kernel.src
    group = kernel.metadata_group
    meta = next((Path(p) for name, p in group.items() if name.endswith(".json")), None)
    if meta is None or "cubin" not in kernel.asm:
        raise Unreplayable(f"kernel {kernel.name}: no cubin to replay")
    return {"metadata": meta.read_text(), "cubin": base64.b64encode(kernel.asm["cubin"]).decode(),
            "signature": [[str(k), _plain_type(v)] for k, v in src.signature.items()],
            "arg_names": list(src.fn.arg_names)}


def _plain_type(t: Any) -> Any:
    return [_plain_type(x) for x in t] if isinstance(t, tuple) else str(t)


_recorder: list[Recorder] = []


def patch_compiled_kernels() -> None:
    """Route every compiled launch through the active recorder, if any (Triton 3.x: the
    JIT calls `kernel.run(gx, gy, gz, stream, function, packed, launch_md, enter, exit, *args)`)."""
    from triton.compiler.compiler import CompiledKernel

    prop = CompiledKernel.__dict__.get("run")
    if not isinstance(prop, property) or getattr(prop.fget, "_kgb_recorded", False):
        return

    def run(self, _get=prop.fget):
        launcher = _get(self)
        if not _recorder:
            return launcher

        def recorded(gx, gy, gz, stream, function, packed, launch_md, enter, exit_, *args):
            if _recorder:
                _recorder[-1].launch(self, (gx, gy, gz), args)
            return launcher(gx, gy, gz, stream, function, packed, launch_md, enter, exit_, *args)

        return recorded

    run._kgb_recorded = True  # type: ignore[attr-defined]
    CompiledKernel.run = property(run)


def record(fn: Any, known: tensor_storage.Storages) -> Recording:
    """Call fn() once and return what it did on the GPU, as data."""
    try:
        from triton.compiler.compiler import CompiledKernel

        if not isinstance(CompiledKernel.__dict__.get("run"), property):
            return Recording(problem="this Triton's launches cannot be recorded")
    except ImportError:
        return Recording(problem="Triton is not installed")
    patch_compiled_kernels()
    recorder = Recorder(known)
    _recorder.append(recorder)
    try:
        with torch.no_grad(), recorder:
            out = fn()
        if torch.cuda.is_initialized():  # a process that never used CUDA has nothing to wait for
            torch.cuda.synchronize()
    finally:
        _recorder.pop()
    if recorder.rec.problem is None:
        try:
            recorder.rec.result = recorder.value(out)
        except Unreplayable as exc:
            recorder.rec.problem = str(exc)
    return recorder.rec
