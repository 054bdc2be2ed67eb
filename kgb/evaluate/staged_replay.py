"""The judge's timing of a replay (kgb.evaluate.replay.Replay): staged before a timing turn,
measured in it and checked after it (`StagedReplay`), so that a judge can time several cases in
one turn, every call of it starting from one state and audited (judge v22).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._pytree import tree_flatten

from kgb.evaluate import quiet_gate, tensor_storage
from kgb.evaluate.call_audit import CallAudit
from kgb.evaluate.correctness import leaves, storage_pairs, tensors_in
from kgb.evaluate.first_call import Drawn, Turned
from kgb.evaluate.nvml import clocks_around
from kgb.evaluate.replay import Replay
from kgb.evaluate.timing_lock import TimingLock, trace


def rebased(value: Any, sent: tensor_storage.Storages, storages: dict[int, torch.UntypedStorage]) -> Any:
    """`value` with each tensor over a sent storage moved, same geometry, to `storages`."""
    if isinstance(value, torch.Tensor):
        sid = sent.id_of(value.untyped_storage())
        if sid is None:
            return value
        return tensor_storage.tensor(storages[sid], tensor_storage.layout(value))
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
    audit: CallAudit | None = None  # what every call before it wrote (kgb.evaluate.call_audit)


class StagedReplay:
    """The recorded call made ready to time, in three steps so that a judge can time several
    cases in one turn: built and warmed up in a work section (`__init__`), measured in the
    GPU's timing turn (`measure`), replayed once more afterwards and checked (`finish`).
    Every turn waits for all running work sections of the GPU to end; a turn per operator
    rather than per case drains them once for all its cases. Every call, timed or checked,
    starts from one state (`before_each`) and leaves a record of what it wrote for the
    judge's audit (`after_each`, with `audit`; judge v22).

    The replay runs on the judge's own copies of set T's storages as sent, with set V's
    values loaded into them, as the candidate process did: from `before` (the bytes as
    sent), of which it keeps set V's part only. Loading V's values overwrites every storage
    of T's arguments whole (T's and V's are drawn alike), so T's own bytes are never needed
    again; and set V's storages are read, never replayed on: a recorded call that names one
    is not replayed (the candidate process records its call on T's buffers). Two copies of a
    bench case's inputs fewer, each held from staging to the end of the turn (session 35)."""

    def __init__(self, recording: dict, sent: tensor_storage.Storages, before: dict[int, torch.Tensor], timed: dict,
                 check: dict, bind: Any, ops: frozenset[str], outputs: tuple[str, ...], repeats: int, warmup: int,
                 exclusive: TimingLock, audit: CallAudit | None = None, tag: str = "",
                 turned_args: tuple[str, ...] = (), fresh: Callable[[], dict] | None = None,
                 alone_gate: str | None = None):
        """`fresh`: another draw of the case's inputs (by argument name, as `timed`), from a
        secret seed, for the warm-up where no storage turns (kgb.evaluate.first_call.Drawn).
        `alone_gate`: the GPU's quiet gate, held whole while it is measured (kgb.evaluate.quiet_gate)."""
        from kgb.evaluate.timing import prepare

        self.bind, self.outputs, self.repeats, self.audit = bind, outputs, repeats, audit
        self.alone_gate = alone_gate
        self.exclusive = exclusive
        self.tag = tag or exclusive.tag  # its lines in the judges' trace (the operator and case)
        self.timing: Any = None
        self.spent = {"reset": 0.0, "audit": 0.0}  # host seconds in `before_each` and `after_each`
        # What the staged call holds on the GPU, roughly, for the judge's turn batches: its
        # copies of what was sent, counted as they were when it kept both sets' bytes.
        self.nbytes = sum(b.numel() for b in before.values())
        t_ids = {sid for t in tree_flatten(timed)[0] if isinstance(t, torch.Tensor)
                 and (sid := sent.id_of(t.untyped_storage())) is not None}
        self.v_bytes = {sid: b for sid, b in before.items() if sid not in t_ids}
        with exclusive.work():
            self.storages = {sid: b.clone().untyped_storage() for sid, b in before.items() if sid in t_ids}
            as_sent = {sid: b.untyped_storage() for sid, b in self.v_bytes.items()}
            self.t_in, self.v_in = rebased(timed, sent, self.storages), rebased(check, sent, as_sent)
            self.replay = Replay(recording, self.storages, ops)
            # each storage the calls run on, with set V's that its values are loaded from
            self.loads = storage_pairs(self.bind(self.t_in), self.bind(self.v_in))
            self._reset()
            # the warm-up's values: set V's, turned where that keeps them whole (judge v29)
            read = {name: v for name, v in self.t_in.items() if name not in outputs}
            self.turned = Turned(self.loads, tensors_in(list(read.values())),
                                 plain=tensors_in([v for name, v in read.items() if name in turned_args]))
            # where nothing turns, another draw of the case's read arguments (judge v31)
            self.drawn = Drawn([]) if self.turned.turns or fresh is None else Drawn(
                _read_pairs(read, fresh(), {dst.data_ptr() for dst, _ in self.loads}))
        self.warm_values: Turned | Drawn = self.turned if self.turned.turns else self.drawn
        self.replay.build_launchers()
        with exclusive.phase("replay warm-up"):  # in short sections of its own (timing.prepare)
            self.prepared = prepare(self.replay, warmup, no_graph_because="the call copies from host memory"
                                    if self.replay.reads_host else "", section=exclusive.work,
                                    before_each=self.before_each, after_each=self.after_each,
                                    before_warm_up=self.before_warm_up if self.warm_values.nbytes else None,
                                    after_warm_up=self.after_warm_up)
        self.drawn.release()  # its memory back: the timed calls run on set V's own values
        self.flush = self.prepared.flush  # the checked call's too (`finish`)

    def _reset(self) -> None:
        """Set V's values in set T's buffers (`correctness.load_values`, its pairs found once)."""
        for dst, src in self.loads:
            dst.copy_(src)

    def before_each(self) -> None:
        """The state each call of the replay starts from, timed or checked (judge v22): set V's
        values in set T's buffers, the outputs poisoned, and the replay's own state put back
        (Replay.prepare_call). Until v21 the timed calls ran back to back on what the last
        left (its answer in the output block, its kept buffers as it left them) and only the
        checked call, after the turn, started from poisoned outputs: a kernel that skipped
        the work it found done was timed skipping and checked computing (tests/redteam.py's
        skip-when-done)."""
        from kgb.evaluate.correctness import poison_

        began = time.perf_counter()
        self._reset()
        for name, t in self.t_in.items():
            if name in self.outputs and isinstance(t, torch.Tensor):
                poison_(t)
        self.replay.prepare_call()
        self.spent["reset"] += time.perf_counter() - began

    def before_warm_up(self) -> None:
        """The state each warm-up call starts from (judge v29): `before_each`'s, with set V's
        floating storages turned (kgb.evaluate.first_call.Turned), or where none turns another
        draw's values loaded (`Drawn`, judge v31), so that the first call on set V's own values
        is the first timed call, in the turn. A kernel that keeps its answer where no reset
        reaches, and copies it out when it finds its inputs the same, computes there and copies
        after: the measurement times that first call alone and tells. The audit counts the call
        without checking it (CallAudit.passed_over)."""
        self.before_each()
        self.warm_values.apply()
        if self.audit is not None:
            self.audit.passed_over()

    def after_each(self, result: Any) -> None:
        """What each call wrote, digested for the audit after the turn (kgb.evaluate.call_audit):
        a kernel that skips its work at random must not be timed on the calls it skipped and
        checked on one it did not."""
        if self.audit is not None:
            began = time.perf_counter()
            self.audit.record(result, self.t_in)
            self.spent["audit"] += time.perf_counter() - began

    def after_warm_up(self, result: Any) -> None:
        """A warm-up call's answer, on other values: not audited, but the audit's digest kernel
        loaded on it (CallAudit.ready), so that the turn does not wait for that."""
        if self.audit is not None:
            self.audit.ready(result, self.t_in)

    def measure(self) -> None:
        """Inside the timing turn."""
        from kgb.evaluate.timing import measure

        self.spent = dict.fromkeys(self.spent, 0.0)
        alone: dict = {}
        with clocks_around() as clock:
            began = time.monotonic()
            with self.exclusive.phase("replay timing"):
                with quiet_gate.alone(self.alone_gate) as (quiet, waited):
                    if self.alone_gate:  # whether no start was under way, and the wait for that
                        alone = {"alone": quiet, "alone_wait_s": round(waited, 4)}
                    self.timing = measure(self.prepared, self.repeats, keep_graph=True)
        self.prepared = None
        if self.timing.graph is None:  # timed eagerly: a graph captured on the way is gone, its pool with it
            self.replay.captured = []
        t = self.timing
        # the host's seconds in each call's reset and audit, within the steps (judge v22): what
        # they add to a turn, the GPU's part of them being queued between the timed calls
        spent = {f"of them {k}": v for k, v in self.spent.items()}
        trace("measure", began, began, time.monotonic(), tag=self.tag, who="replay", mode=t.mode, repeats=t.repeats,
              steps={k: round(v, 4) for k, v in (t.steps | spent).items()}, **clock, **alone)

    def finish(self) -> Replayed:
        """After the turn: the call once more on set V's values, from the state each timed call
        started from."""
        timing = self.timing = self.timing.counted()  # its clock's session ended with the turn
        now = time.monotonic()
        began, ended = timing.first_span or (now, now)
        trace("first call", began, began, ended, tag=self.tag, first_us=timing.first_us,
              repeated_us=timing.repeated_us, turned_bytes=self.turned.nbytes, drawn_bytes=self.drawn.nbytes,
              mode=timing.mode)
        with self.exclusive.work():
            # As each timed call started (`before_each`, the L2 flush): a kernel cannot tell
            # this call from those, so what it computes here it computed there. The outputs'
            # blocks were poisoned by then, an earlier call's (the graph's pool, or the blocks
            # the caching allocator hands this call), so an output it never writes is not zeros.
            self.before_each()
            self.flush()
            if timing.graph is not None:
                timing.graph.replay()
                result = timing.graph_output
            else:
                result = self.replay()
            torch.cuda.synchronize()
        return Replayed(timing, result, self.t_in, self.audit)


def _read_pairs(read: dict, drawn: dict, runs_on: set[int]) -> list[tuple[torch.UntypedStorage, torch.UntypedStorage]]:
    """Each storage under the read arguments that the calls run on (`runs_on`, by address), with
    the one at the same place in another draw of them (`drawn`, by argument name); none unless
    the draw is alike in everything but its values: every tensor of the same geometry over a
    storage of the same size, every other argument equal. A spec can derive a plain argument
    from the values it drew (a longest sequence); the recorded call was made with set V's, and a
    kernel bounded by it could run past the end of a buffer on the draw's values."""
    names = list(read)
    try:
        pairs = storage_pairs([read[n] for n in names], [drawn[n] for n in names])
        alike = all(_alike(a, b) for a, b in zip(leaves([read[n] for n in names]),
                                                 leaves([drawn[n] for n in names]), strict=True))
    except (KeyError, ValueError, AttributeError):
        return []
    if not alike or any(dst.nbytes() != src.nbytes() for dst, src in pairs):
        return []
    return [(dst, src) for dst, src in pairs if dst.data_ptr() in runs_on]


def _alike(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and a.stride() == b.stride() and a.storage_offset() == b.storage_offset())
    return type(a) is type(b) and a == b


def time_replay(recording: dict, sent: tensor_storage.Storages, before: dict[int, torch.Tensor], timed: dict, check: dict,
                bind: Any, ops: frozenset[str], outputs: tuple[str, ...], repeats: int, warmup: int,
                exclusive: TimingLock, audit: CallAudit | None = None) -> Replayed:
    """One case's StagedReplay, staged, measured in a turn of its own and finished."""
    from kgb.evaluate import kernel_clock

    staged = StagedReplay(recording, sent, before, timed, check, bind, ops, outputs, repeats, warmup, exclusive, audit)
    with kernel_clock.session(), exclusive():
        staged.measure()
    return staged.finish()
