"""A candidate's GPU work as data, timed by the judge.

A candidate process can patch anything in its own interpreter, the clock included, so a
time it reports proves nothing. The candidate process therefore records one call as data
(kgb.evaluate.recording): every Triton launch and every ATen op that allocates or writes
memory, in order, with each tensor named by the storage it lives in. The judge, which never runs candidate Python, loads those
binaries and replays the call on its own buffers under its own clock (`Replay`). A
replay is an answer like any other: the judge checks what it computes on fresh inputs.

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
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import torch
from torch.utils._pytree import tree_flatten

from kgb.evaluate import codec, launcher
from kgb.evaluate.call_audit import CallAudit
from kgb.evaluate.integrity import ALLOWED_OPS
from kgb.evaluate.nvml import clocks_around
from kgb.evaluate.recording import Unreplayable
from kgb.evaluate.timing_lock import TimingLock, trace

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
        self._pristine = [torch.empty(0, dtype=torch.uint8, device=o.device).set_(o).clone() for o in self.outside]
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
                storage, dtype = self.outside[int(t["s"][1])], codec._dtype(t["dtype"])
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
            return codec._tensor(self._storage(v["t"]["s"], new), v["t"])
        if "v" in v:
            return v["v"]
        if "list" in v:
            return [self._value(x, new) for x in v["list"]]
        if "tuple" in v:
            return tuple(self._value(x, new) for x in v["tuple"])
        if "dtype" in v:
            return codec._dtype(v["dtype"])
        if "device" in v:
            return torch.device("cuda" if v["device"] == "cuda" else "cpu")
        if "memory_format" in v:
            return codec._MEMORY_FORMATS[v["memory_format"]]
        if "layout" in v:
            return torch.strided
        raise Unreplayable("a malformed value")

    def _pointer(self, v: Any, new: list[torch.UntypedStorage]) -> Any:
        if "t" in v:
            t = v["t"]
            st = self._storage(t["s"], new)
            return st.data_ptr() + int(t["offset"]) * codec._dtype(t["dtype"]).itemsize
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
        checked replay starts from this state too (StagedReplay.finish). The storages of the
        last call are poisoned while still held, so that the next call's allocations come
        from blocks poisoned before (the caching allocator does not hand out held ones)."""
        for storage, pristine in zip(self.outside, self._pristine, strict=True):
            torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage).copy_(pristine)
        self.poison_what_it_returns_from_before()
        for storage in (*self.made, *self.captured):
            torch.empty(0, dtype=torch.uint8, device=storage.device).set_(storage).fill_(0xFF)


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


def rebased(value: Any, sent: codec.Storages, storages: dict[int, torch.UntypedStorage]) -> Any:
    """`value` with each tensor over a sent storage moved, same geometry, to `storages`."""
    if isinstance(value, torch.Tensor):
        sid = sent.id_of(value.untyped_storage())
        if sid is None:
            return value
        return codec._tensor(storages[sid], codec.layout(value))
    if isinstance(value, list | tuple):
        return type(value)(rebased(v, sent, storages) for v in value)
    if isinstance(value, dict):
        return {k: rebased(v, sent, storages) for k, v in value.items()}
    return value


@dataclass
class Replayed:
    timing: Any  # kgb.evaluate.timing.Timing of the replays
    result: Any  # what the replay returned on set V
    inputs: dict  # set T's tensors after that replay (outputs written in place are there)
    audit: CallAudit | None = None  # the digests of every call before it (kgb.evaluate.call_audit)


class StagedReplay:
    """The recorded call made ready to time, in three steps so that a judge can time several
    cases in one turn: built and warmed up in a work section (`__init__`), measured in the
    GPU's timing turn (`measure`), replayed once more afterwards on freshly poisoned outputs
    (`finish`). Every turn waits for all running work sections of the GPU to end; a turn
    per operator rather than per case drains them once for all its cases.

    The replay runs on the judge's own copies of set T's storages as sent, with set V's
    values loaded into them, as the candidate process did: from `before` (the bytes as
    sent), of which it keeps set V's part only. Loading V's values overwrites every storage
    of T's arguments whole (T's and V's are drawn alike), so T's own bytes are never needed
    again; and set V's storages are read, never replayed on: a recorded call that names one
    is not replayed (the candidate process records its call on T's buffers). Two copies of a
    bench case's inputs fewer, each held from staging to the end of the turn (session 35)."""

    def __init__(self, recording: dict, sent: codec.Storages, before: dict[int, torch.Tensor], timed: dict,
                 check: dict, bind: Any, ops: frozenset[str], outputs: tuple[str, ...], repeats: int, warmup: int,
                 exclusive: TimingLock, audit: CallAudit | None = None):
        from kgb.evaluate.timing import prepare

        self.bind, self.outputs, self.repeats, self.audit = bind, outputs, repeats, audit
        self.exclusive = exclusive
        self.timing: Any = None
        # What the staged call holds on the GPU, roughly, for the judge's turn batches: its
        # copies of what was sent, counted as they were when it kept both sets' bytes.
        self.nbytes = sum(b.numel() for b in before.values())
        t_ids = {sid for t in tree_flatten(timed)[0] if isinstance(t, torch.Tensor)
                 and (sid := sent.id_of(t.untyped_storage())) is not None}
        self.v_bytes = {sid: b for sid, b in before.items() if sid not in t_ids}
        with exclusive.work():
            self.storages = {sid: torch.empty(0, dtype=torch.uint8, device=b.device).set_(b.clone().untyped_storage())
                             .untyped_storage() for sid, b in before.items() if sid in t_ids}
            as_sent = {sid: b.untyped_storage() for sid, b in self.v_bytes.items()}
            self.t_in, self.v_in = rebased(timed, sent, self.storages), rebased(check, sent, as_sent)
            self.replay = Replay(recording, self.storages, ops)
            self._reset()
        self.replay.build_launchers()
        with exclusive.phase("replay warm-up"):  # in short sections of its own (timing.prepare)
            self.prepared = prepare(self.replay, warmup, no_graph_because="the call copies from host memory"
                                    if self.replay.reads_host else "", section=exclusive.work,
                                    before_each=self.before_each, after_each=self.after_each)

    def _reset(self) -> None:
        from kgb.evaluate.correctness import load_values

        load_values(self.bind(self.t_in), self.bind(self.v_in))

    def before_each(self) -> None:
        """The state each call of the replay starts from, timed or checked (judge v22): set V's
        values in set T's buffers, the outputs poisoned, and the replay's own state put back
        (Replay.prepare_call). Until v21 the timed calls ran back to back on what the last
        left (its answer in the output block, its kept buffers as it left them) and only the
        checked call, after the turn, started from poisoned outputs: a kernel that skipped
        the work it found done was timed skipping and checked computing (tests/redteam.py's
        skip-when-done)."""
        from kgb.evaluate.correctness import poison_

        self._reset()
        for name, t in self.t_in.items():
            if name in self.outputs and isinstance(t, torch.Tensor):
                poison_(t)
        self.replay.prepare_call()

    def after_each(self, result: Any) -> None:
        """What each call wrote, digested for the audit after the turn (kgb.evaluate.call_audit):
        a kernel that skips its work at random must not be timed on the calls it skipped and
        checked on one it did not."""
        if self.audit is not None:
            self.audit.record(result, self.t_in)

    def measure(self) -> None:
        """Inside the timing turn."""
        from kgb.evaluate.timing import measure

        with clocks_around() as clock:
            began = time.monotonic()
            with self.exclusive.phase("replay timing"):
                self.timing = measure(self.prepared, self.repeats, keep_graph=True)
        self.prepared = None
        if self.timing.graph is None:  # timed eagerly: a graph captured on the way is gone, its pool with it
            self.replay.captured = []
        t = self.timing
        trace("measure", began, began, time.monotonic(), tag=self.exclusive.tag, who="replay", mode=t.mode, repeats=t.repeats,
              steps={k: round(v, 4) for k, v in t.steps.items()}, **clock)

    def finish(self) -> Replayed:
        """After the turn: the call once more on set V's values, from the state each timed call
        started from."""
        from kgb.evaluate.timing import JUDGE_PROTOCOL, flush_of

        timing = self.timing = self.timing.counted()  # its clock's session ended with the turn
        with self.exclusive.work():
            # As each timed call started (`before_each`, the L2 flush): a kernel cannot tell
            # this call from those, so what it computes here it computed there. The outputs'
            # blocks were poisoned by then, an earlier call's (the graph's pool, or the blocks
            # the caching allocator hands this call), so an output it never writes is not zeros.
            self.before_each()
            flush_of(JUDGE_PROTOCOL)()
            if timing.graph is not None:
                timing.graph.replay()
                result = timing.graph_output
            else:
                result = self.replay()
            torch.cuda.synchronize()
        return Replayed(timing, result, self.t_in, self.audit)


def time_replay(recording: dict, sent: codec.Storages, before: dict[int, torch.Tensor], timed: dict, check: dict,
                bind: Any, ops: frozenset[str], outputs: tuple[str, ...], repeats: int, warmup: int,
                exclusive: TimingLock, audit: CallAudit | None = None) -> Replayed:
    """One case's StagedReplay, staged, measured in a turn of its own and finished."""
    from kgb.evaluate import kernel_clock

    staged = StagedReplay(recording, sent, before, timed, check, bind, ops, outputs, repeats, warmup, exclusive, audit)
    with kernel_clock.session(), exclusive():
        staged.measure()
    return staged.finish()
