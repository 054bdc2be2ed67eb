"""The candidate process: the only place where candidate code runs.

The judge forks it before touching the GPU, hands it one end of a socket pair, and from
then on talks to it in messages (kgb.evaluate.codec): "load" the source, "call" an entry
point on inputs the judge sends, "time" an entry point (`Server`). The process confines
itself (kgb.evaluate.sandbox; its start is kgb.evaluate.candidate_start) before it reads the
candidate's source, so nothing the candidate does can reach the judge's reference, cases,
comparison or verdict, other candidates, secrets or the network.

What this process reports about the candidate (the ATen ops and Triton launches it made,
its recording) is produced next to candidate code and is therefore an observation, not a
proof: docs/design/threat-model.md says which layers make it hard to forge and which
attacks stay open.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import os
import pickle
import sys
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from kgb.evaluate import codec, draws, launcher, tensor_storage
from kgb.evaluate.bounds import call_inputs
from kgb.evaluate.correctness import (
    fill_allocator_with_garbage,
    leaves,
    load_values,
    release_cached_memory,
)
from kgb.evaluate.integrity import audited, recorded_by_profiler
from kgb.evaluate.memory_file import Accepted, SealedOutbox
from kgb.evaluate.op_watch import returned, set_source, watched
from kgb.evaluate.provenance import stored_values, summarise
from kgb.evaluate.recording import record
from kgb.evaluate.verdict import Status
from kgb.operators import Spec, spec_from_text

# In the CPU interpreter a kernel's body runs as Python, so what Triton's compiler refuses on a
# GPU (a name `tl` lacks, an undefined name, a call with the wrong arguments) raises only as the
# kernel runs, an InterpreterError caused by one of these. Judged as a GPU judges it, so that
# the chips' statuses compare: `tl.nonexistent` was a runtime_error on the CPU and a
# compile_error on a GPU (session 46's user walk).
UNCOMPILABLE = (AttributeError, NameError, TypeError)


def classify(exc: BaseException) -> Status:
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"CompilationError", "CompileTimeAssertionFailure", "PTXASError", "SyntaxError"}:
        return Status.COMPILE_ERROR
    if "InterpreterError" in names and isinstance(exc.__cause__, UNCOMPILABLE):
        return Status.COMPILE_ERROR
    return Status.RUNTIME_ERROR


def short_traceback(exc: BaseException, limit: int = 6) -> str:
    lines = traceback.format_exception(exc, limit=-limit)
    return "".join(lines).strip()[-3000:]


# --------------------------------------------------------------------- in the candidate

# Bound before any candidate code runs, which could rebind torch.cuda.synchronize in this
# process (its work would then outlive the judge's work section; it would slow other
# judges' timings, never make its own faster).
_synchronize = torch.cuda.synchronize


def _idle(device: str) -> None:
    """Wait for all of this process's GPU work, on every stream: whatever a call launched
    ends inside the judge's work section, before the reply."""
    if device == "cuda":
        _synchronize()


def _hooks() -> list[str]:
    """Hooks that would run candidate code outside the audited calls, or around launches.

    Pre-run hooks on kernels are caught at launch (kgb.evaluate.integrity)."""
    found = []
    try:
        import triton

        runtime = triton.knobs.runtime
        for name in ("launch_enter_hook", "launch_exit_hook", "kernel_load_start_hook",
                     "kernel_load_end_hook", "jit_cache_hook", "jit_post_compile_hook",
                     "add_stages_inspection_hook"):
            hook = getattr(runtime, name, None)
            if hook is not None and (hook.calls if hasattr(hook, "calls") else True):
                found.append(f"triton.knobs.runtime.{name}")
    except (ImportError, AttributeError):
        pass
    if sys.gettrace() is not None or sys.getprofile() is not None:
        found.append("a Python trace or profile hook")
    if gc.callbacks:
        found.append("a gc callback")
    return found


def _import(source: str, workspace: Path) -> ModuleType:
    # Triton reads kernel source through inspect, so the module needs a real file.
    path = workspace / "candidate.py"
    path.write_text(source)
    module = ModuleType("candidate")
    module.__file__ = str(path)
    sys.modules["candidate"] = module
    exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - this process exists to run it
    return module


def _say_when_compiling(conn: Connection, device: str) -> None:
    """Tell the judge when Triton compiles a kernel, and wait for its word to go on: the
    judge lets go of its work section meanwhile (kgb.evaluate.timing_lock), so that other
    judges' timings need not wait out seconds of host work. What ran on the GPU before is
    finished first. Only the judge's timing of others is at stake: a candidate that says it
    compiles when it does not gains nothing for itself (its own latency is the judge's replay)."""
    from triton.runtime import jit

    original = jit.JITFunction._do_compile
    if getattr(original, "_kgb_said", False):
        return

    def _do_compile(self, *args, **kwargs):
        _idle(device)
        codec.send(conn, "compiling")
        try:
            kernel = original(self, *args, **kwargs)
            launcher.build(kernel)  # a C compile too, which must not hold a work section
            return kernel
        finally:
            codec.send(conn, "compiled")
            if codec.receive(conn, device).kind != "resume":
                os._exit(70)  # the judge is gone or confused: nothing left to answer

    _do_compile._kgb_said = True  # type: ignore[attr-defined]
    jit.JITFunction._do_compile = _do_compile


class Server:
    def __init__(self, conn: Connection, device: str, workspace: Path):
        self.conn, self.device, self.workspace = conn, device, workspace
        self.module: ModuleType | None = None
        # the operator's spec, which the judge sends once this process has no check left on
        # inputs it could know in advance: it draws bench cases' inputs itself rather than
        # receive hundreds of MB (`drawn`)
        self.spec: Spec | None = None
        self.no_spec = "the judge sent no spec"
        self.replies = SealedOutbox()  # the memory files its replies' bytes go back in
        if device == "cuda":
            _say_when_compiling(conn, device)

    def _watched(self, known: tensor_storage.Storages | None = None, value: dict | None = None) -> Any:
        """On the CPU, where the memory the candidate's kernels load came from
        (kgb.evaluate.op_watch.watched): the judge's inputs, and the call's numbers."""
        if self.device != "cpu":
            return contextlib.nullcontext()
        inputs = list(known.by_id.values()) if known is not None else []
        numbers = [v for v in leaves([value["args"], value["kwargs"]]) if isinstance(v, int | float)] if value else []
        return watched(inputs, numbers, importing=known is None, tensors=known.tensors if known is not None else None)

    def reply_error(self, kind: str, status: Status, message: str, **fields: Any) -> None:
        codec.send(self.conn, kind, None, error={"status": str(status), "message": message}, **fields)

    def take_spec(self, text: str, path: str, cases: str) -> None:
        try:
            self.spec = spec_from_text(text, Path(path), lambda: pickle.loads(base64.b64decode(cases)))
        except Exception as exc:  # noqa: BLE001 - the judge sends the inputs instead
            self.no_spec = f"its spec did not load here: {type(exc).__name__}: {str(exc)[:300]}"

    def load(self, source: str) -> None:
        if self.device == "cpu":
            set_source(source)  # the numbers a table its wrapper builds may hold (kgb.evaluate.source_numbers)
        try:
            with audited() as audit, recorded_by_profiler() as profiled, self._watched():
                self.module = _import(source, self.workspace)
                _idle(self.device)
        except BaseException as exc:  # noqa: BLE001 - a broken import is the verdict
            status = Status.COMPILE_ERROR if isinstance(exc, SyntaxError) else classify(exc)
            self.reply_error("loaded", status, f"importing the candidate failed: {type(exc).__name__}: {exc}\n{short_traceback(exc)}")
            return
        codec.send(self.conn, "loaded", None, torch_ops=audit.torch_ops + profiled.ops, kernels=audit.kernels,
                   hooks=_hooks() + audit.hooks, profiler_intact=profiled.intact)

    def call(self, entry: str, value: dict, known: tensor_storage.Storages) -> None:
        fn = getattr(self.module, entry, None)
        if not callable(fn):
            self.reply_error("returned", Status.REJECTED, f"the candidate does not define {entry}")
            return
        before = snapshot(known)
        fill_allocator_with_garbage(self.device)
        try:
            with torch.no_grad(), audited() as audit, recorded_by_profiler() as profiled, stored_values() as recorded, \
                    call_inputs(list(known.by_id.values())), self._watched(known, value):
                result = fn(*value["args"], **value["kwargs"])
                _idle(self.device)
                if self.device == "cpu":
                    returned(result, known.tensors)
        except BaseException as exc:  # noqa: BLE001 - the candidate's failure is the verdict
            self.reply_error("returned", classify(exc), f"{type(exc).__name__}: {exc}\n{short_traceback(exc)}")
            return
        try:
            summary = summarise(recorded) if self.device == "cpu" else None
            codec.send(self.conn, "returned", {"return": result, "stored": summary}, known, refresh_known=True,
                       unchanged=_unchanged(known, before), outbox=self.replies,
                       torch_ops=audit.torch_ops + profiled.ops, kernels=audit.kernels,
                       hooks=_hooks() + audit.hooks, profiler_intact=profiled.intact, gpu_mib=_held_mib(self.device),
                       host_reads=audit.host_reads)
        except codec.WireError as exc:
            self.reply_error("returned", Status.WRONG_OUTPUT, f"the return value cannot be judged: {exc}")

    def time(self, entry: str, value: dict, known: tensor_storage.Storages) -> None:
        """One call on set T, which loads or compiles the kernels; then, on the judge's word,
        one call on T's buffers with set V's values loaded, recorded (kgb.evaluate.replay: the
        judge times its replay and checks the replay's answer on set V) and audited as a checked
        call is. Only the recording and the audit go back: since judge v35 no answer of this
        process's on a timed case is checked, and none crosses; until then a last call on set V
        was made for its answer and, from v33, its audit.

        The judge holds a work section from its "go" to the "timed" reply; the first call runs
        in one before it. This process keeps no clock of its own: until judge v27 it timed
        three calls beside the judge's latency, which a candidate could patch and nothing
        read, in a work section every timing turn of the GPU waited to drain."""
        fn = getattr(self.module, entry)
        (t_args, t_kwargs), (v_args, v_kwargs) = [(s["args"], s["kwargs"]) for s in value["sets"]]
        try:
            with torch.no_grad():
                fn(*t_args, **t_kwargs)
                _idle(self.device)
        except BaseException as exc:  # noqa: BLE001
            self.reply_error("staged", classify(exc), f"while timing: {type(exc).__name__}: {exc}\n{short_traceback(exc)}")
            return
        codec.send(self.conn, "staged")
        go = codec.receive(self.conn, self.device)
        if go.kind != "go":
            return
        try:
            with torch.no_grad():
                # The call the judge replays is the one audited: the case's call on bench-sized
                # inputs, where a timed case has no check of its own (judge v33). The recorder's
                # snapshots of tensors made before it are the judge's copies, not the call's
                # (recording.Recorder._snapshot).
                load_values((t_args, t_kwargs), (v_args, v_kwargs))
                with audited() as audit, recorded_by_profiler() as profiled:
                    recording = record(lambda: fn(*t_args, **t_kwargs), known)
                    _idle(self.device)
        except BaseException as exc:  # noqa: BLE001
            self.reply_error("timed", classify(exc), f"while timing: {type(exc).__name__}: {exc}\n{short_traceback(exc)}")
            return
        codec.send(self.conn, "timed", {"recording": recording.as_json()}, outbox=self.replies,
                   gpu_mib=_held_mib(self.device), torch_ops=audit.torch_ops + profiled.ops, kernels=audit.kernels,
                   hooks=_hooks() + audit.hooks, profiler_intact=profiled.intact, host_reads=audit.host_reads)

    def drawn(self, draw: dict) -> tuple[dict, tensor_storage.Storages] | None:
        """The value of a "call" or "time" message that names its inputs' seeds instead of
        carrying them: drawn here as the judge drew them (kgb.evaluate.draws.redraw), on the
        GPU, where sending them cost a copy off the judge's GPU, a memory file and a copy onto
        this one's. Each storage's checksum must agree with the judge's; where one does not
        (a make_inputs with a nondeterministic op), or the draw fails, the reply says why and
        the judge sends the inputs. None then."""
        why = self.no_spec if self.spec is None else ""
        if not why:
            try:
                case = next(c for c in self.spec.cases if c.name == draw["case"])
                value = draws.redraw(self.spec, case, tuple(int(s) for s in draw["seeds"]), self.device)
                known = tensor_storage.storages_in(value)
                ours, theirs = [draws.digest(s) for s in known.by_id.values()], list(draw["digests"])
                if ours != theirs:
                    differ = [i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b]
                    where = differ[0] if differ else min(len(ours), len(theirs))
                    why = (f"the inputs drawn here differ from the judge's (storage {where} of {len(theirs)}): "
                           "their make_inputs is not deterministic on this device")
            except Exception as exc:  # noqa: BLE001 - the judge sends the inputs instead
                why = f"drawing them here failed: {type(exc).__name__}: {str(exc)[:300]}"
        if why:
            release_cached_memory(self.device)
            codec.send(self.conn, "undrawn", None, reason=why)
            return None
        codec.send(self.conn, "drawn")
        return value, known

    def _ask_for_gpu(self, kind: str) -> None:
        """Before a call's inputs go onto the GPU: the judge takes its work section for what
        follows, until this process's reply (kgb.evaluate.timing_lock). Reading them was
        host work, done without it."""
        if kind in ("call", "time"):
            codec.send(self.conn, "gpu")
            if codec.receive(self.conn, self.device).kind != "granted":
                os._exit(70)  # the judge is gone or confused: nothing left to answer

    def serve(self) -> None:
        while True:
            known = tensor_storage.Storages()
            try:
                msg = codec.receive(self.conn, self.device, known, adopt=True, before_device=self._ask_for_gpu,
                                    memory_files=Accepted.ANY)
            except (EOFError, OSError):
                return
            if msg.kind == "load":
                self.load(msg.fields["source"])
            elif msg.kind == "spec":
                self.take_spec(msg.fields["text"], msg.fields["path"], msg.fields["cases"])
            elif msg.kind in ("call", "time"):
                value = msg.value
                if "draw" in msg.fields:
                    drawn = self.drawn(msg.fields["draw"])
                    if drawn is None:
                        continue  # the judge sends the inputs next
                    value, known = drawn
                if msg.kind == "call":
                    self.call(msg.fields["entry"], value, known)
                else:
                    self.time(msg.fields["entry"], value, known)
            elif msg.kind == "bye":
                return
            release_cached_memory(self.device)
            self.replies.make_spare(stop=lambda: self.conn.poll(0))  # while the judge reads the reply


def _held_mib(device: str) -> int | None:
    """The most GPU memory this process's allocator has held so far (MiB), for the judge's
    record of what an evaluation holds (Verdict.gpu_mib): said by the candidate's own
    process, so a hint for scheduling, never a measurement anything is judged on."""
    return int(torch.cuda.max_memory_reserved()) >> 20 if device == "cuda" else None


def snapshot(known: tensor_storage.Storages) -> dict[int, torch.Tensor]:
    """Copies of the inputs' storages, where they live: the judge needs back only what changed."""
    return {sid: tensor_storage.storage_bytes(s).clone() for sid, s in known.by_id.items()}


def _unchanged(known: tensor_storage.Storages, before: dict[int, torch.Tensor]) -> frozenset[int]:
    return frozenset(sid for sid, s in known.by_id.items()
                     if sid in before and s.nbytes() == before[sid].numel() and torch.equal(tensor_storage.storage_bytes(s), before[sid]))
