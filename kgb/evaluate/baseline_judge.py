"""A judge asked for baselines only: a few operators' bench-case baselines timed before any
trial of them, in the time the GPU would otherwise stand idle (kgb.baseline_scout asks, and
says for which operators).

A chip's first job measures every bench case's baseline once (kgb.tracking.baselines): 590
measurements, 35.8-40.1 s of its timing turns on an H100 (session 69), each in the turn of the
trial that meets the case first. Meanwhile, in the job's first half minute, the GPU stands idle
some 18 s while the first trials' candidates compile. A baseline depends on no candidate, so
the baselines of operators whose trials come later can be timed then, and those trials are
given them as any later trial is.

The protocol is the one a trial's judge follows for baselines it times in a turn of their own
(kgb.evaluate.bench_timing): each case's set T drawn from its seed, warmed up in a work section,
timed in a turn, as many cases to a turn as TURN_BATCH_BYTES allows. No candidate process is
started: nothing of a candidate's runs in this process or beside it, as in the last turn of a
trial's judge, whose candidate process is reaped before its baselines are timed.

Only the GPU's idle time is taken. Before each turn's cases are drawn the judge waits for an
instant at which no other judge holds or asks for a turn or runs a work section, and stops once
IDLE_WAIT_S passes without one: the trials' judges then keep the GPU busy, and their own
turns time what is left. It reserves its operator's memory only where the ledger has room at
once (a wait there would hold up every trial's reservation asked for after it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import torch

from kgb.evaluate import cuda_waits, kernel_clock, memory_ledger, quiet_gate
from kgb.evaluate.bench_timing import baseline_turns
from kgb.evaluate.case_runner import CaseRunner
from kgb.evaluate.draws import draw_inputs
from kgb.evaluate.phases import Phases
from kgb.evaluate.timing_lock import TimingLock
from kgb.evaluate.verdict import InstrumentFailed
from kgb.operators import Case, load_spec

# How long the judge looks for an idle instant before a turn, at most. In the first 30 s of a
# first job on an H100 (session 69's trace) the GPU held work sections a quarter of the time,
# in stretches under a second; once the trials' checks and turns follow each other, it is
# seldom free for two seconds together.
IDLE_WAIT_S = 2.0
BUSY = "the GPU stayed busy"  # why a judge stopped before its last case
AHEAD = " (baselines ahead)"  # after the operator, in the tag of this judge's turns (the judges' trace)


def time_baselines(request: dict, emit: Callable[[dict], None]) -> dict:
    """Time the baselines of the request's operators, in order, each one's bench cases that it
    does not give (`baselines`), in the GPU's idle time; emit each case's measurement as it is
    made. Returns why it stopped before the last ("" where it did not): one judge serves a few
    operators, so that each does not cost a process's start and its CUDA context's (about 0.6 s
    between one operator's turn and the next's, one judge each, on an H100 in session 70)."""
    phase = Phases()
    device = request["device"]
    lock = TimingLock(request.get("timing_lock"), phase, torch.cuda.synchronize if device == "cuda" else lambda: None)
    gate = quiet_gate.gate_of(request.get("timing_lock"))

    def final(stopped: str) -> dict:
        return {"stopped": stopped, "phase_s": {k: round(v, 3) for k, v in phase.seconds.items()}}

    if device == "cuda":
        cuda_waits.apply()
        with phase("clock warm-up"), quiet_gate.changing(gate):  # this process's CUDA start
            kernel_clock.warm_up()
    for operator in request["operators"]:
        spec = load_spec(Path(operator["spec"]))
        runner = CaseRunner(spec, None, device, phase)  # no candidate: the baselines are the judge's own calls
        runner.exclusive, runner.quiet_gate = lock, gate
        lock.tag = spec.id + AHEAD
        if stopped := _operator(runner, request, operator, emit):
            return final(stopped)
    return final("")


def _operator(runner: CaseRunner, request: dict, operator: dict, emit: Callable[[dict], None]) -> str:
    """One operator's baselines; why it stopped before its last ("" where it did not)."""
    spec, timed_tags, tags = runner.spec, set(request["time_tags"]), set(request["case_tags"])
    known = set(operator.get("baselines") or {})
    cases = [c for c in spec.cases if c.tag in timed_tags and c.tag in tags and c.name not in known]
    if not cases:
        return ""
    name = runner.baseline(next(iter(spec.signatures)))[0]
    with ExitStack() as held:
        ledger = memory_ledger.for_request({**request, "gpu_mib": operator.get("gpu_mib")})
        reserved = ledger.reserved(operator["gpu_mib"], tag=spec.id, at_once=True) if ledger is not None else None
        if reserved is not None and not held.enter_context(reserved):
            return "no room in the GPU's memory ledger"
        if name == "torch":
            _first_uses(runner, [c for c in spec.cases if c.tag in tags and c.tag not in timed_tags])
        try:
            return _turns(runner, cases, request["repeats"], request["warmup"],
                          lambda record: emit({**record, "op": spec.id, "baseline": name}))
        except InstrumentFailed as exc:
            return f"a baseline broke this process's CUDA context ({exc})"


def _first_uses(runner: CaseRunner, small: list[Case]) -> None:
    """The reference's first-use compiles (kgb.evaluate.first_use), met on the operator's small
    cases, where a trial's judge meets them in its checks: a bench case's inputs are too large
    to capture, and its warm-up would compile them inside its work section."""
    for case in small:
        with runner.exclusive.work(), runner.phase("draw"):
            inputs = draw_inputs(runner.spec, case, case.seed, runner.device)
        with runner.phase("reference compile"):
            runner.compile_reference(runner.spec.entry_of(case).name, inputs)
        del inputs
    runner.released()


def _turns(runner: CaseRunner, cases: list[Case], repeats: int, warmup: int, emit: Callable[[dict], None]) -> str:
    """The cases' baselines, each turn's draws begun at an idle instant; why it stopped before
    the last ("" where it did not)."""
    busy: list[float] = []

    def idle() -> bool:
        looked = time.monotonic()
        with runner.phase("waiting for the GPU to be idle"):
            if runner.exclusive.idle_within(IDLE_WAIT_S):
                return True
        busy.append(time.monotonic() - looked)
        return False

    for batch in baseline_turns(runner, cases, repeats, warmup, ready=idle):
        for case, b in batch:
            emit({"name": case.name, "baseline_us": b.us, "mode": b.mode, "turn": b.turn, "missing": b.missing})
    return f"{BUSY} for {busy[0]:.1f} s" if busy else ""
