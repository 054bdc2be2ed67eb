"""A candidate's GPU work as data, timed by the judge.

A candidate process can patch anything in its own interpreter, the clock included, so a
time it reports proves nothing. The candidate process therefore records one call as data
(kgb.evaluate.recording): every Triton launch and every ATen op that allocates or writes
memory, in order, with each tensor named by the storage it lives in. The judge, which never runs candidate Python, loads those
binaries and replays the call on its own buffers under its own clock (`Replay`, timed in the
GPU's turns by kgb.evaluate.staged_replay). A replay is an answer like any other: the judge
checks what it computes on fresh inputs.

What the judge trusts of a recording is checked before use: an ATen op must be one the
audit allows, a kernel's argument types must be Triton's own (they become C code in
Triton's launcher), a kernel must target the judge's GPU. A GPU binary runs in the
judge's CUDA context, so the judge replays before it computes the reference it checks
against (see docs/design/threat-model.md).
"""

from __future__ import annotations

import base64
import json
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from torch.utils._pytree import tree_flatten

from kgb.evaluate import launcher, tensor_storage
from kgb.evaluate.integrity import ALLOWED_OPS
from kgb.evaluate.recording import Unreplayable

_SCALAR_TYPES = {"i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "f32", "fp64"}
_POINTEE_TYPES = _SCALAR_TYPES | {"fp8e4nv", "fp8e5", "fp8e4b15", "fp8e4b8", "fp8e5b16", "void"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,200}")


def _check_type(t: Any) -> tuple | str:
    if isinstance(t, list):
        return tuple(_check_type(x) for x in t)
    if not isinstance(t, str):
        raise Unreplayable("a malformed kernel signature")
    if t == "constexpr" or t in _SCALAR_TYPES or (t.startswith("*") and t.lstrip("*").removeprefix("k") in _POINTEE_TYPES):
        return t
    raise Unreplayable(f"kernel argument type {t[:40]!r} cannot be replayed")


class _Kernel:
    """One recorded kernel, loaded into the judge's CUDA context."""

    def __init__(self, desc: dict, folder: Path):
        from triton.compiler.compiler import CompiledKernel

        meta = json.loads(desc["metadata"])
        name = str(meta.get("name", ""))
        if not _IDENTIFIER.fullmatch(name) or not all(_IDENTIFIER.fullmatch(str(k)) for k in meta):
            raise Unreplayable("a malformed kernel name or metadata")
        if meta.get("tensordesc_meta"):
            raise Unreplayable(f"kernel {name} uses tensor descriptors")
        target = meta.get("target") or {}
        major, minor = torch.cuda.get_device_capability()
        if target.get("backend") != "cuda" or int(target.get("arch", 0)) != major * 10 + minor:
            raise Unreplayable(f"kernel {name} was compiled for another GPU")
        signature = {str(k): _check_type(v) for k, v in desc["signature"]}
        arg_names = [str(a) for a in desc["arg_names"]]
        if list(signature) != arg_names:
            raise Unreplayable(f"kernel {name}: a signature that does not match its arguments")
        (folder / f"{name}.json").write_text(json.dumps(meta))
        (folder / f"{name}.cubin").write_bytes(base64.b64decode(desc["cubin"]))
        src = SimpleNamespace(signature=signature, constants={}, fn=SimpleNamespace(arg_names=arg_names))
        group = {f"{name}.json": str(folder / f"{name}.json"), f"{name}.cubin": str(folder / f"{name}.cubin")}
        self.compiled = CompiledKernel(src, group, name)
        self.n_args = len(arg_names)

    def launch(self, grid: list[int], stream: int, args: list) -> None:
        launcher = self.compiled.run  # the first use loads the binary and builds Triton's launcher
        launcher(*grid, stream, self.compiled.function, self.compiled.packed_metadata, None, None, None, *args)


class Replay:
    """The recorded call, replayable in the judge: `replay()` does the call's GPU work on
    the judge's own storages (`inputs`, by the codec's ids) and returns what it returned."""

    def __init__(self, recording: dict, inputs: dict[int, torch.UntypedStorage], ops: frozenset[str] = ALLOWED_OPS):
        if recording.get("problem"):
            raise Unreplayable(str(recording["problem"]))
        self._folder = tempfile.TemporaryDirectory(prefix="kgb-replay-")
        self.kernels = {}
        for i, (key, desc) in enumerate(dict(recording["kernels"]).items()):
            folder = Path(self._folder.name) / str(i)  # two specialisations may share a name
            folder.mkdir()
            self.kernels[str(key)] = _Kernel(desc, folder)
        self.inputs, self.ops = inputs, ops
        self.outside = [self._restore(s) for s in recording["snapshots"]]
        # Each call starts from the same state (`prepare_call`): the outside storages as the
        # recording had them, and what the calls before it made poisoned.
        self._pristine = [tensor_storage.storage_bytes(o).clone() for o in self.outside]
        self.made: list[torch.UntypedStorage] = []  # what the last call allocated
        self.captured: list[torch.UntypedStorage] = []  # what a call captured in a CUDA graph allocated (its pool)
        self._made = 0  # storages the steps so far allocate
        self.steps = [self._step(s) for s in recording["steps"]]
        self.result = self._checked(recording["result"])
        self._ensure_allocator()
        # A copy from (pageable) host memory cannot be captured in a CUDA graph; the judge
        # does not try, since a capture that fails midway can leave its context unusable.
        self.reads_host = any(self._on_host(step["args"]) or self._on_host(list(step["kwargs"].values()))
                              for step in self.steps if "op" in step)

    def build_launchers(self) -> None:
        """Triton's launchers for the kernels, built ahead of their first launch: host work
        that need not hold a work section (kgb.evaluate.launcher)."""
        for kernel in self.kernels.values():
            launcher.build(kernel.compiled)

    def _on_host(self, v: Any) -> bool:
        for t in _tensors_named(v):
            kind, index = t["s"][0], int(t["s"][1])
            storage = {"in": self.inputs, "outside": dict(enumerate(self.outside))}.get(kind, {}).get(index)
            if storage is not None and storage.device.type == "cpu":
                return True
        return False

    def _restore(self, snap: dict) -> torch.UntypedStorage:
        data = snap["data"]
        if not isinstance(data, torch.Tensor) or data.dtype != torch.uint8:
            raise Unreplayable("a malformed snapshot")
        return data.to("cuda" if snap["device"] == "cuda" else "cpu").clone().untyped_storage()

    def _step(self, step: dict) -> dict:
        if "launch" in step:
            if str(step["launch"]) not in self.kernels:
                raise Unreplayable("a launch of an unrecorded kernel")
            kernel = self.kernels[str(step["launch"])]
            grid = [int(g) for g in step["grid"]]
            if len(grid) != 3 or min(grid) < 0 or len(step["args"]) != kernel.n_args:
                raise Unreplayable("a malformed launch")
            if any(self._on_host(a) for a in step["args"]):
                # Host memory reaches a kernel only pinned, and the judge's copies are not:
                # the replay would fault in the judge's context.
                raise Unreplayable(f"kernel {kernel.compiled.name} reads host memory")
            return {"kernel": kernel, "grid": grid, "args": [self._checked(a) for a in step["args"]]}
        name = str(step["op"])
        if name.split(".")[0] not in self.ops and name not in self.ops:
            raise Unreplayable(f"{name} is not an op the judge replays")
        namespace, _, rest = name.partition("::")
        packet, _, overload = rest.partition(".")
        op = getattr(getattr(getattr(torch.ops, namespace), packet), overload or "default")
        args, kwargs = self._checked(step["args"]), {str(k): self._checked(v) for k, v in dict(step["kwargs"]).items()}
        self._made += len(step["new"])
        return {"op": op, "args": args, "kwargs": kwargs, "new": [int(i) for i in step["new"]]}

    def _checked(self, v: Any) -> Any:
        """v, once every storage it names exists when the step runs."""
        if not isinstance(v, dict):
            raise Unreplayable("a malformed value")
        if "t" in v:
            kind, index = v["t"]["s"][0], int(v["t"]["s"][1])
            limit = {"in": None, "new": self._made, "outside": len(self.outside)}.get(kind, -1)
            if (kind == "in" and index not in self.inputs) or (kind != "in" and not 0 <= index < limit):
                raise Unreplayable(f"a tensor in a storage the call never had ({kind} {index})")
        for key in ("list", "tuple"):
            if key in v:
                for x in v[key]:
                    self._checked(x)
        return v

    def poison_what_it_returns_from_before(self) -> None:
        """Poison what the call returns in a tensor made before it: the call's steps must
        write it again. A candidate that keeps its answer between calls (one zeros tensor per
        shape, say) would otherwise return the snapshot's bytes, right, while the judge timed
        only a decoy store. Only what the result names is poisoned: a table the call reads is
        the candidate's to keep."""
        from kgb.evaluate.correctness import poison_

        for t in _tensors_named(self.result):
            if t["s"][0] == "outside":
                storage, dtype = self.outside[int(t["s"][1])], tensor_storage.named_dtype(t["dtype"])
                # all of it, in the result's dtype: a view may overlap itself (expand)
                whole = torch.empty(0, dtype=dtype, device=storage.device)
                poison_(whole.set_(storage, 0, (storage.nbytes() // dtype.itemsize,), (1,)))

    def _ensure_allocator(self) -> None:
        import triton

        if any(getattr(k.compiled.metadata, "global_scratch_size", 0) for k in self.kernels.values()):
            triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))

    def _storage(self, where: list, new: list[torch.UntypedStorage]) -> torch.UntypedStorage:
        kind, index = where[0], int(where[1])
        if kind == "in":
            return self.inputs[index]
        if kind == "new":
            return new[index]
        if kind == "outside":
            return self.outside[index]
        raise Unreplayable(f"unknown storage kind {kind!r}")

    def _value(self, v: Any, new: list[torch.UntypedStorage]) -> Any:
        if "t" in v:
            return tensor_storage.tensor(self._storage(v["t"]["s"], new), v["t"])
        if "v" in v:
            return v["v"]
        if "list" in v:
            return [self._value(x, new) for x in v["list"]]
        if "tuple" in v:
            return tuple(self._value(x, new) for x in v["tuple"])
        if "dtype" in v:
            return tensor_storage.named_dtype(v["dtype"])
        if "device" in v:
            return torch.device("cuda" if v["device"] == "cuda" else "cpu")
        if "memory_format" in v:
            return tensor_storage.MEMORY_FORMATS[v["memory_format"]]
        if "layout" in v:
            return torch.strided
        raise Unreplayable("a malformed value")

    def _pointer(self, v: Any, new: list[torch.UntypedStorage]) -> Any:
        if "t" in v:
            t = v["t"]
            st = self._storage(t["s"], new)
            return st.data_ptr() + int(t["offset"]) * tensor_storage.named_dtype(t["dtype"]).itemsize
        if "tuple" in v:
            return tuple(self._pointer(x, new) for x in v["tuple"])
        return v.get("v")

    def __call__(self) -> Any:
        new: list[torch.UntypedStorage] = []
        for step in self.steps:
            if "kernel" in step:
                stream = torch.cuda.current_stream().cuda_stream
                step["kernel"].launch(step["grid"], stream, [self._pointer(a, new) for a in step["args"]])
            else:
                kwargs = {k: self._value(v, new) for k, v in step["kwargs"].items()}
                out = step["op"](*self._value(step["args"], new), **kwargs)
                leaves, _ = tree_flatten(out)
                for i in step["new"]:
                    new.append(leaves[i].untyped_storage())
        if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
            self.captured = new  # a graph's replays write these again, without this method
        else:
            self.made = new  # kept until the next call has been prepared: its blocks are not reused before
        return self._value(self.result, new)

    def prepare_call(self) -> None:
        """Put back the state every call of the replay starts from, outside the timed region
        (judge v22): the storages made before the call as the recording had them, less what
        the call returns of them (poisoned: `poison_what_it_returns_from_before`), and every
        storage an earlier call allocated poisoned, a graph's pool too. A kernel that keeps
        state from one call for the next (an answer, a count of its calls) finds none, so a
        deterministic one does in each timed repetition what it does in the checked one: the
        checked replay starts from this state too (staged_replay.StagedReplay.finish). The storages of the
        last call are poisoned while still held, so that the next call's allocations come
        from blocks poisoned before (the caching allocator does not hand out held ones)."""
        from kgb.evaluate.correctness import poison_storage

        for storage, pristine in zip(self.outside, self._pristine, strict=True):
            tensor_storage.storage_bytes(storage).copy_(pristine)
        self.poison_what_it_returns_from_before()
        for storage in (*self.made, *self.captured):
            poison_storage(storage)


def _tensors_named(v: Any) -> Iterator[dict]:
    """Each tensor a recorded value names (its "t": storage and layout), lists and tuples
    walked; a Python list of values is walked too."""
    if isinstance(v, list | tuple):
        for x in v:
            yield from _tensors_named(x)
    elif isinstance(v, dict):
        if "t" in v:
            yield v["t"]
        for key in ("list", "tuple"):
            yield from _tensors_named(v.get(key, ()))
