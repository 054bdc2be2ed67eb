"""The judge's handle on a candidate process (kgb.evaluate.candidate runs inside it).

The judge forks the process, then talks to it in messages (kgb.evaluate.codec): it loads
the source, calls an entry point on inputs, has it time one. Inputs and outputs cross the
socket with the judge's work section let go of, and so does a compile the candidate
reports (kgb.evaluate.timing_lock): both are host work that no timing turn should wait out.
What crosses with a call, as values, is kgb.evaluate.candidate_call's.
"""

from __future__ import annotations

import base64
import os
import pickle
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

from kgb.evaluate import codec, leftovers, memory_file, tensor_storage
from kgb.evaluate.candidate import snapshot
from kgb.evaluate.candidate_call import (
    DRAWN,
    RECEIVING,
    SENDING,
    Redraw,
    Reply,
    ReplyBound,
    ReplyTooLarge,
)
from kgb.evaluate.candidate_start import run_forked
from kgb.evaluate.draws import bound_value, digest
from kgb.evaluate.memory_file import Accepted
from kgb.evaluate.phases import Phases
from kgb.evaluate.recording import MAX_SNAPSHOT_BYTES
from kgb.evaluate.sandbox import Limits
from kgb.evaluate.timing_lock import TimingLock, trace
from kgb.operators import CaseTag, Spec
from kgb.shown_spec import text_without_cases


class CandidateDied(Exception):
    """The candidate process ended without answering."""


class TurnOverrun(Exception):
    """The candidate's timed calls held their work section too long; its process is gone."""


# The longest a candidate's recorded call and its call on set V may hold their work section,
# which every timing turn of the GPU waits for: two calls of a few hundred milliseconds, and
# the recording's copies, fit well inside it.
TURN_LIMIT_S = 120.0


class CandidateProcess:
    """The judge's handle on one candidate process."""

    # the memory file this judge writes its messages to this process into, kept from one to
    # the next (memory_file.Outbox); made at the first message that needs one
    _outbox: memory_file.Outbox | None = None
    closed = False  # killed already (`kill`)
    _killed_at = 0.0  # when `kill` sent the signal (time.monotonic)
    _reaped = False  # waited for: its pid may now be another process's
    _looked = False  # `close` has looked whether it is gone
    # The host buffers of the replies read since the last hand-over, let go of after the next
    # one by a thread of their own (kgb.evaluate.leftovers): letting go of a reply's memory
    # file unmaps it and frees its pages, 0.16 s of the judge's for aten::reshape's 768 MB
    # replies on an H100 (session 60's profile), which then runs beside the judge's work.
    _read: tuple[torch.Tensor, ...] = ()

    def __init__(self, device: str, workspace: Path, limits: Limits):
        import socket
        from multiprocessing.connection import Connection as Conn

        ours, theirs = socket.socketpair()
        self.device = device
        pid = os.fork()
        if pid == 0:
            ours.close()
            run_forked(Conn(theirs.detach()), device, workspace, limits)
        theirs.close()
        self.pid, self.conn = pid, Conn(ours.detach())
        self.sandbox, self.notes = "", []
        self.has_spec = False  # given the spec (`give_spec`): it draws bench inputs itself
        self.held_mib = 0  # the most GPU memory its allocator said it held, in any reply (a hint)
        # the judge's work sections, let go of while the candidate compiles and while inputs and
        # outputs cross (set by the judge)
        self.exclusive: TimingLock | None = None

    def wait_ready(self) -> CandidateProcess:
        """Wait until the process has confined itself; starting (CUDA, Triton's driver)
        takes a while, so the judge forks its candidate process before it starts its own."""
        ready = self._receive()
        self.sandbox, self.notes = ready.fields["sandbox"], ready.fields["notes"]
        return self

    def _lock(self) -> TimingLock:
        return self.exclusive or TimingLock(None, Phases())

    def _receive(self, known: tensor_storage.Storages | None = None, bound: ReplyBound | None = None) -> codec.Message:
        """The next message, its buffers read with the judge's work section let go of (host
        work) and copied to the GPU in short sections of their own; compile notices on the
        way are answered. Only a call's reply may carry buffers, within its `bound`."""
        lock = self._lock()

        @contextmanager
        def reading() -> Iterator[None]:
            with lock.paused(), lock.phase(RECEIVING):
                yield

        limit = bound.nbytes if bound is not None else 0
        held: list[torch.Tensor] = []
        try:
            msg = codec.receive(self.conn, self.device, known, reading=reading, copying=lock.work,
                                memory_files=Accepted.SEALED, max_bytes=limit, held=held)
            while msg.kind == "compiling":
                self._while_compiling()
                msg = codec.receive(self.conn, self.device, known, reading=reading, copying=lock.work,
                                    memory_files=Accepted.SEALED, max_bytes=limit, held=held)
            self._read += tuple(held)
            said = msg.fields.get("gpu_mib")
            if isinstance(said, int) and not isinstance(said, bool):
                self.held_mib = max(self.held_mib, said)
            return msg
        except codec.Oversized as exc:
            if bound is None:
                raise
            raise ReplyTooLarge(f"the candidate's reply announced {exc.announced:,} bytes, more than this call may "
                                f"send back: {bound}; return outputs whose storages hold no more than they do") from exc
        except (EOFError, OSError) as exc:
            raise CandidateDied(self._exit_reason()) from exc

    def _bound(self, sent: tensor_storage.Storages, outputs: int | None) -> ReplyBound:
        """What a call on `sent` may send back: outputs of `outputs` bytes, where the caller
        says (the judge always does), else of the inputs' own size (a test's call need not)."""
        if outputs is None:
            outputs = sum(s.nbytes() for s in sent.by_id.values())
        return ReplyBound.of(sent, outputs, self.device)

    def _exit_reason(self) -> str:
        import signal

        _, status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            hint = " (the CPU time limit)" if sig == signal.SIGXCPU else ""
            return f"killed by signal {name}{hint}"
        return f"exit code {os.WEXITSTATUS(status)}"

    def _while_compiling(self) -> None:
        """The candidate compiles (host work): the GPU is free of this judge meanwhile."""
        if self.device == "cuda":
            torch.cuda.synchronize()  # the judge's own work queued before the call
        lock = self._lock()
        with lock.paused(), lock.phase("candidate compile"):
            if codec.receive(self.conn, self.device, max_bytes=0).kind != "compiled":
                raise codec.WireError("a compile notice was not followed by its end")
        codec.send(self.conn, "resume")

    def _hand_over(self, kind: str, value: Any, **fields: Any) -> codec.Outgoing:
        """Copy a message of inputs off the GPU and write it with the work section let go
        of, and let the candidate process onto the GPU once it has read them (it asks):
        the copies and the writing are host work, seconds for a bench case's hundreds of MB,
        which no timing turn should wait out, so the copies go in short work sections of
        their own (tensor_storage.COPY_CHUNK). Returns what was sent."""
        if self.device == "cuda":
            torch.cuda.synchronize()  # the judge's own GPU work (the inputs' draw) ends in the section
        lock = self._lock()
        with lock.paused(), lock.phase(SENDING):
            if self._outbox is None:
                self._outbox = memory_file.Outbox()
            out = codec.encode(kind, value, copying=lock.work, memory_file=True, outbox=self._outbox, **fields)
            codec.write(self.conn, out)
            if self._receive().kind != "gpu":
                raise codec.WireError("the candidate process did not ask for the GPU before a call")
        codec.send(self.conn, "granted")
        if self._read:  # the replies read since the last hand-over, let go of beside the judge's work
            leftovers.free_beside(self._read)
            self._read = ()
        return out

    def give_spec(self, spec: Spec) -> None:
        """Send the operator's spec, with which the process draws a case's inputs itself
        where the judge names their seeds (`Redraw`). Sent once no check is left that the
        spec's seeds would let a candidate know in advance: after the cases that are not
        benched and their re-checks on secret seeds. Of the cases, only those an agent is
        shown (smoke and bench): the file's text goes without its CASES statement, and the
        shown cases as data (pickled: this process trusts the judge, never the other way)."""
        shown = [c for c in spec.cases if c.tag != CaseTag.CHECK]
        codec.send(self.conn, "spec", None, text=text_without_cases(spec.path), path=str(spec.path),
                   cases=base64.b64encode(pickle.dumps(shown)).decode())
        self.has_spec = True

    def load(self, source: str) -> Reply:
        codec.send(self.conn, "load", None, source=source)
        msg = self._receive()
        return Reply(None, msg.fields)

    def _send_inputs(self, kind: str, value: dict, redraw: Redraw | None, **fields: Any) -> tuple[tensor_storage.Storages, str]:
        """Send a "call" or "time" message: the storages it sends by value, and why they
        were sent where `redraw` asked the process to draw them itself (""). Drawn there, it
        is the checksums of this judge's copies that it must match
        (kgb.evaluate.draws.digest); a process that says it matched and did not computes on
        inputs of its own, and its answers are still checked against the reference on this
        judge's."""
        instead = ""
        if redraw is not None:
            with self._lock().phase(DRAWN):  # the checksums here, the draw there
                known = tensor_storage.storages_in(value)
                digests = [digest(s) for s in known.by_id.values()]
                self._hand_over(kind, None, draw={"case": redraw.case, "seeds": list(redraw.seeds), "digests": digests},
                                **fields)
                msg = self._receive()
            if msg.kind == "drawn":
                return known, ""
            if msg.kind != "undrawn":
                raise codec.WireError(f"a candidate process answered a draw with {msg.kind!r}")
            instead = str(msg.fields.get("reason", ""))[:500] or "no reason given"
        return self._hand_over(kind, value, **fields).sent, instead

    def call(self, entry: str, args: tuple, kwargs: dict, redraw: Redraw | None = None,
             outputs: int | None = None) -> Reply:
        """Call `entry`; the tensors in args/kwargs are updated in place with what the
        candidate left in them, and the return value aliases them as it did there. With
        `redraw`, the process is asked to draw them itself (`_send_inputs`). `outputs`: the
        bytes its outputs may take (`candidate_call.output_bytes` of the reference's); a larger reply is
        refused unread (`ReplyTooLarge`)."""
        sent, instead = self._send_inputs("call", bound_value([(args, kwargs)]), redraw, entry=entry)
        msg = self._receive(sent, self._bound(sent, outputs))
        if msg.fields.get("error") is not None:
            return Reply(None, msg.fields, sent_instead=instead)
        for sid, data in msg.known_bytes.items():
            tensor_storage.overwrite(sent.by_id[sid], data)
        if not isinstance(msg.value, dict) or "return" not in msg.value:
            raise codec.WireError("a call's reply has no return value")
        return Reply(msg.value["return"], msg.fields, msg.value.get("stored"), instead)

    def time(self, entry: str, timed: tuple[tuple, dict], check: tuple[tuple, dict], redraw: Redraw | None = None,
             ) -> tuple[Reply, tensor_storage.Storages, dict[int, torch.Tensor]]:
        """The reply (value: the recording), the storages sent under their ids, and their bytes
        as sent. With `redraw`, the process is asked to draw the sets itself (`_send_inputs`).
        Nothing it computed comes back (judge v35): the reply may hold the recording's snapshots
        of tensors made before the call, at most recording.MAX_SNAPSHOT_BYTES.
        Its calls run in the judge's work sections (`self.exclusive`), never beside a timing
        turn, and the transfers with the section let go of: the recorded call is timed by the
        judge's replay, in the judge's own turn."""
        exclusive = self._lock()
        with exclusive.work():
            sent, sent_instead = self._send_inputs("time", bound_value([timed, check]), redraw, entry=entry)
            before = snapshot(sent)  # the judge's own copies, which the candidate cannot reach
            msg = self._receive()  # "staged": its inputs rebuilt, its kernels loaded
        if msg.fields.get("error") is None:
            # The recorded call and the audited one in a section of their own: a turn asked for
            # meanwhile waits for the first call or for these, not for both.
            with exclusive.work():
                codec.send(self.conn, "go")
                bound = ReplyBound.of(sent, 0, self.device, snapshots=MAX_SNAPSHOT_BYTES)
                msg = self._within_limit(lambda: self._receive(None, bound))
        if msg.fields.get("error") is not None:
            return Reply(None, msg.fields, sent_instead=sent_instead), sent, before
        if not (isinstance(msg.value, dict) and "recording" in msg.value):
            raise codec.WireError("a timing reply has no recording")
        return Reply(msg.value, msg.fields, sent_instead=sent_instead), sent, before

    def _within_limit(self, receive: Callable[[], codec.Message]) -> codec.Message:
        """The next message, if it comes within TURN_LIMIT_S. Every timing turn of this GPU
        waits for the work sections to end (up to DRAIN_LIMIT_S, then times beside them): a
        candidate may not keep one."""
        if not self.conn.poll(TURN_LIMIT_S):
            self.close()
            raise TurnOverrun(f"the candidate's timed calls held the GPU past {TURN_LIMIT_S:g} s")
        return receive()

    def kill(self) -> None:
        """End the process now, without waiting for it to go (`close` reaps it): once its last
        call has replied, its end runs while the judge stages that call's replay. Killing it
        again does nothing."""
        if self.closed:
            return
        self.closed = True
        try:
            codec.send(self.conn, "bye")
        except OSError:
            pass
        self.conn.close()
        leftovers.leave(self._read)  # unmapping a large reply's file: left for the judge's exit
        self._read = ()
        if self._outbox is not None:
            self._outbox.close()
        self._killed_at = time.monotonic()
        # its process group first: what a GPU's candidate process started (it may vfork and
        # exec a shell, which would outlive it; its seccomp filter keeps them in its group),
        # then the process, should it not lead a group yet (it makes its session first thing)
        for kill, target in ((os.killpg, self.pid), (os.kill, self.pid)):
            try:
                kill(target, 9)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self, wait: bool = True) -> None:
        """Kill the process, unless `kill` has; with `wait`, reap it. A process is reaped only
        once it has closed its files, the GPU driver's among them, so its CUDA context and any
        GPU work it left queued should be gone by then (the judge closes it so before it times
        a baseline: kgb.evaluate.bench_timing; on an H200, tests/test_redteam.py's
        busy-between-calls found its baselines the honest solution's, session 41). The judge's
        last close does not wait: a process's CUDA context takes a while to go, and the verdict
        waits for the judge to exit (its leftover children die with it). Closing a reaped
        process, or closing again without waiting, does nothing."""
        self.kill()
        if self._reaped or (self._looked and not wait):
            return
        self._looked = True
        try:
            self._reaped = os.waitpid(self.pid, 0 if wait else os.WNOHANG)[0] != 0
        except ChildProcessError:
            self._reaped = True
        # its CUDA context goes as it dies, outside any work section: whether a timing turn
        # beside that times differently (TRACE_ENV; unwaited, only when the kill was sent)
        trace("exit", self._killed_at, self._killed_at, time.monotonic(), waited=wait)
