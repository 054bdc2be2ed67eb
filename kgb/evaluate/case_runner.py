"""Running one spec's cases against a candidate, in the judge process: each case checked
(draw, reference, the candidate's call, comparison), then the bench cases timed through the
judge's replay of the candidate's recorded GPU work (`stage`, `measure`, `finish`).

What the judge process around it does (forking the candidate processes, the order of the
cases, the verdict) is kgb.evaluate.judge.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable
from typing import Any

import torch

from kgb.evaluate import kernel_clock
from kgb.evaluate.baseline import BaselineTiming, routine
from kgb.evaluate.call_audit import CallAudit
from kgb.evaluate.candidate_process import CandidateProcess, Redraw, Reply, TurnOverrun
from kgb.evaluate.correctness import (
    clone_exact,
    compare_outputs,
    release_cached_memory,
    same_bits,
    tensors_in,
)
from kgb.evaluate.draws import candidate_copy, draw_inputs, timing_draws
from kgb.evaluate.integrity import ALLOWED_OPS, Audit
from kgb.evaluate.phases import Phases
from kgb.evaluate.provenance import unexplained
from kgb.evaluate.recording import Unreplayable
from kgb.evaluate.staged_replay import Replayed, StagedReplay
from kgb.evaluate.timing_lock import TimingLock, trace
from kgb.evaluate.verdict import CaseResult, Status, TimedBy
from kgb.operators import Case, Spec

# The candidate's own clock is never the latency (the judge's replay is); it is reported
# beside it, from a few eager calls (kgb.evaluate.timing.own_clock). They run in a work
# section, which every timing turn of the GPU waits to drain: in session 17 on the H200, with
# the full protocol of `measure` (some 25 calls and a graph), these sections were the longest
# a turn waited for.
OWN_CLOCK_REPEATS = 3
# Bench cases staged for one timing turn, until their copies of the inputs hold this much of
# the GPU: every turn waits for all the GPU's running work sections to end and holds up every
# section asked for meanwhile, so an operator's small cases share one turn (session 18 on the
# H200: 180 s of turns waiting for sections to drain over 584 bench cases, 2355 s of sections
# waiting behind turns). A large case still takes a turn of its own: twelve judges each
# holding several would not fit in the GPU's memory. At 512 MB (sessions 18-32) most
# operators took two or three turns; at 2 GB, with 20 judgements in flight on the H200
# (session 33), a sweep took 249 turns against 428, its sections waited 949 s behind them
# against 1141 s, and it ended in 183.1 s against 188.6 s (its GPU memory peaked at 140,366
# MiB, as the 512 MB sweeps' had at 126,522-137,987).
TURN_BATCH_BYTES = 2048 * 1024 * 1024
# What a timing mode says where a candidate process could not draw a bench case's inputs
# itself (kgb.evaluate.draws) and they were sent to it, with the reason
SENT_NOT_DRAWN = "inputs sent, not drawn by the candidate process"


class Failed(Exception):
    """Ends the evaluation with a status and a message."""

    def __init__(self, status: Status, message: str):
        super().__init__(message)
        self.status, self.message = status, message


class InstrumentFailed(Exception):
    """The judge's own timing failed: the speed baseline (libcublas, PyTorch) raised, or
    the judge's replay of the recorded call hit a CUDA error, which leaves this process's
    CUDA context unusable. The candidate had passed every case by then; it stays correct,
    and untimed from that case on (no latency is no speedup, so nothing is gained by
    making a replay fail)."""


def _replay_failed(case: Case, exc: torch.AcceleratorError) -> InstrumentFailed:
    return InstrumentFailed(f"case {case.name}: the judge's replay of the recorded call failed: "
                            f"{str(exc).splitlines()[0][:300]}")


def _tensors(inputs: dict[str, Any], names: tuple[str, ...]) -> dict[str, torch.Tensor]:
    return {n: v for n, v in inputs.items() if n in names and isinstance(v, torch.Tensor)}


def _written(inputs: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The written arguments to compare: tensors, and lists of them (vLLM's copy_blocks
    writes a list of caches; left out, a candidate that never wrote them would pass a spec
    without a comparison of its own)."""
    return {n: v for n, v in inputs.items() if n in names and (
        isinstance(v, torch.Tensor) or (isinstance(v, list | tuple) and v and all(isinstance(t, torch.Tensor) for t in v)))}


@dataclasses.dataclass
class TimedCase:
    """A bench case on its way through the timing turn (CaseRunner.stage, measure, finish)."""
    case: Case
    reply: Reply  # the candidate process's: its answer on set V, its own clock, the recording
    cand_t: dict  # set T as sent, with V's values and the outputs the candidate wrote
    check: dict  # set V as drawn, for the reference
    baseline: BaselineTiming | None  # None: measured by an earlier evaluation
    crowded: int  # the judge's crowded turns before this case
    replay: StagedReplay | str | None = None  # or why the judge cannot replay the call

    @property
    def nbytes(self) -> int:
        return self.replay.nbytes if isinstance(self.replay, StagedReplay) else 0


def secret_seed() -> int:
    return random.SystemRandom().randrange(1 << 62)


class CaseRunner:
    """Runs the cases of one spec against one candidate process."""

    def __init__(self, spec: Spec, candidate: CandidateProcess, device: str, phase: Phases | None = None):
        self.spec, self.candidate, self.device = spec, candidate, device
        self.kernels: list[str] = []
        self.torch_ops: list[str] = []
        self.produced_elements = False  # some case's output is non-empty
        self.stored: dict | None = None  # what the last call's interpreted kernels stored
        self.replayable_ops = (ALLOWED_OPS | spec.allowed_torch_ops) - spec.denied_torch_ops
        self.phase = phase or Phases()
        # the GPU's timing turn and the work sections it waits for (set by _judge)
        self.exclusive = TimingLock(None, self.phase)
        self.known_baselines: dict[str, float] = {}  # by case name, measured by earlier evaluations
        # why a case's inputs were sent where the candidate process was asked to draw them, by case name
        self.sent_instead: dict[str, str] = {}

    def audit(self, reply: Reply, what: str) -> None:
        """Reject what the candidate process saw the candidate do outside Triton."""
        fields = reply.fields
        if fields.get("hooks"):
            raise Failed(Status.REJECTED, f"{what}: the candidate registered {', '.join(fields['hooks'])}; "
                         "hooks run code outside the judged calls and are not allowed")
        if not fields.get("profiler_intact", True):
            raise Failed(Status.REJECTED, f"{what}: the candidate stopped or replaced the op audit")
        audit = Audit(torch_ops=list(fields.get("torch_ops", [])), kernels=list(fields.get("kernels", [])))
        self.kernels += audit.kernels
        self.torch_ops += audit.torch_ops
        bad = audit.violations(ALLOWED_OPS | self.spec.allowed_torch_ops, self.spec.denied_torch_ops)
        if bad:
            raise Failed(Status.REJECTED, f"{what}: the candidate computed with PyTorch ({', '.join(bad)}); "
                         "values must be computed by Triton kernels")

    def _call(self, entry: str, cand_in: dict, what: str, redraw: Redraw | None = None) -> Any:
        args, kwargs = self.spec.signatures[entry].bind(cand_in)
        reply = self.candidate.call(entry, args, kwargs, redraw)
        if reply.sent_instead and redraw is not None:
            self.sent_instead[redraw.case] = reply.sent_instead
        if reply.error:
            raise Failed(Status(reply.error["status"]), f"{what}: {reply.error['message']}")
        self.audit(reply, what)
        self.stored = reply.stored
        return reply.value

    def released(self) -> None:
        """This process's cached GPU memory given back (`release_cached_memory`), after each case
        and turn. Outside any work section, so traced (TRACE_ENV): whether a timing turn beside
        a release times differently (session 37: some measurements came out 15-25% slow, with
        no section beside them)."""
        began = time.monotonic()
        with self.phase("memory release"):
            gave_back = release_cached_memory(self.device)
        if gave_back:
            trace("release", began, began, time.monotonic(), tag=self.exclusive.tag)

    def check(self, case: Case, seed: int, redraw: bool = False) -> CaseResult:
        """Check one case on the draw from `seed`; with `redraw`, the candidate process
        draws its copy itself (it has the spec: `CandidateProcess.give_spec`)."""
        spec, entry = self.spec, self.spec.entry_of(case)
        # Three work sections: no other judge's timing beside any of them (drawing a bench
        # case's inputs on the GPU, and copying them, would take the memory bandwidth it
        # measures), and a turn asked for meanwhile waits for the one running, not all three.
        with self.exclusive.work():
            with self.phase("draw"):
                pristine = draw_inputs(spec, case, seed, self.device)
                ref_in, cand_in = clone_exact(pristine), candidate_copy(spec, pristine)
            with self.phase("reference"):
                expected = self.reference(entry.name, ref_in, case)
        with self.exclusive.work(), self.phase("candidate"):
            actual = self._call(entry.name, cand_in, f"case {case.name}", Redraw(case.name, (seed,)) if redraw else None)
        with self.exclusive.work():
            with self.phase("compare"):
                message, max_abs, max_rel = self._compare(case, expected, actual, ref_in, cand_in)
                self.produced_elements |= _has_elements(expected, ref_in, spec)
                if message is None:
                    message = self._untouched(case, pristine, cand_in)
            if message is None and self.device == "cpu" and spec.kernel_required and self.stored is not None:
                written = _tensors(cand_in, (*spec.output_args, *spec.inout_args))
                message = unexplained([actual, *written.values()], self.stored, [pristine])
                if message:
                    raise Failed(Status.REJECTED, f"case {case.name}: {message}")
            random_flag = getattr(spec.module, "RANDOM", False)
            if message is None and (random_flag(case) if callable(random_flag) else random_flag):
                message = self._fresh_samples(case, entry.name, pristine, actual, cand_in)
        status = Status.CORRECT if message is None else Status.WRONG_OUTPUT
        return CaseResult(case.name, str(case.tag), status, message or "", max_abs, max_rel)

    def reference(self, entry: str, ref_in: dict, case: Case) -> Any:
        args, kwargs = self.spec.signatures[entry].bind(ref_in)
        try:
            with torch.no_grad():
                return self.spec.reference_for(entry)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - reported as what it is: a spec bug
            raise Failed(Status.RUNTIME_ERROR, f"case {case.name}: the spec's reference raised "
                         f"{type(exc).__name__}: {exc} (a bug in the spec, not the candidate)") from exc

    def _fresh_samples(self, case: Case, entry: str, pristine: dict, first: Any, first_in: dict) -> str | None:
        """A random operator must draw new samples on every call, from the same inputs."""
        again_in = candidate_copy(self.spec, pristine)
        second = self._call(entry, again_in, f"case {case.name} (second draw)")
        if self._same_draws(first, first_in, second, again_in):
            if self._reference_repeats(case, entry, pristine):
                return None  # a degenerate draw (bernoulli with p = 0): no sample can differ
            return (f"case {case.name}: two calls on the same inputs returned the same samples; "
                    "a random op must draw new ones on every call")
        return None

    def _reference_repeats(self, case: Case, entry: str, pristine: dict) -> bool:
        """Whether the reference, called twice on the same inputs, draws the same samples."""
        a_in, b_in = clone_exact(pristine), clone_exact(pristine)
        a, b = self.reference(entry, a_in, case), self.reference(entry, b_in, case)
        return self._same_draws(a, a_in, b, b_in)

    def _same_draws(self, first: Any, first_in: dict, second: Any, second_in: dict) -> bool:
        """Whether two calls drew the same samples: every output of more than one element equal
        bit for bit (a call that outputs none drew nothing to compare)."""
        written = (*self.spec.output_args, *self.spec.inout_args)
        firsts = [t for t in tensors_in([first, _tensors(first_in, written)]) if t.numel() > 1]
        seconds = [t for t in tensors_in([second, _tensors(second_in, written)]) if t.numel() > 1]
        return bool(firsts) and len(firsts) == len(seconds) and all(
            same_bits(a, b) for a, b in zip(firsts, seconds, strict=True))

    def _compare(self, case, expected, actual, ref_in, cand_in) -> tuple[str | None, float | None, float | None]:
        message, max_abs, max_rel = compare_outputs(self.spec, case, *self._answers(expected, actual, ref_in, cand_in))
        return (f"case {case.name}: {message}" if message else None), max_abs, max_rel

    def _answers(self, expected: Any, actual: Any, ref_in: dict, cand_in: dict) -> tuple[dict, dict, dict]:
        """(actual, expected, the candidate's inputs) as compare_outputs takes them: the return
        value and the written arguments."""
        written = (*self.spec.output_args, *self.spec.inout_args)
        exp = {"return": expected, **_written(ref_in, written)}
        act = {"return": actual, **_written(cand_in, written)}
        return act, exp, cand_in

    def _untouched(self, case: Case, pristine: dict, cand_in: dict) -> str | None:
        written = set(self.spec.output_args) | set(self.spec.inout_args)
        for name, before in pristine.items():
            if name in written or not isinstance(before, torch.Tensor):
                continue
            if not same_bits(cand_in[name], before):
                return f"case {case.name}: the candidate modified its input {name}, which it must not"
        return None

    def stage(self, case: Case, repeats: int, warmup: int) -> TimedCase:
        """A bench case made ready for the timing turn; `measure` times staged cases in one
        turn, then `finish` judges each and says its latency.

        The candidate process rebuilds every input it receives, so the timed calls never see
        the objects it was checked with. After them it makes one call that is recorded: the
        judge replays that GPU work under its own clock (kgb.evaluate.replay) and judges the
        replay's answer on a fresh draw from a secret seed. Then it computes once more on
        that draw, loaded into the same buffers, and that output is judged here too, so an
        answer remembered from an earlier call fails; the latency is only ever the replay's.

        So the process that checked the candidate times it too, once its checks are done,
        though it has seen set T's values (the bench case's own seed) in its check: an answer
        it remembers from there is right for set T only. If its recorded call reads it, the
        replay gets set T's answer on set V's values; if the call returns it, v14 poisons it
        first; and its own last answer on set V is judged. (Until v15 a second candidate
        process timed, which had seen no check input: one more CUDA context per evaluation to
        start, on a host where starting them was what a sweep waited for; on the H200 a sweep
        of 210 operators took 294 s without it where it took 427 s with it, session 30.)
        """
        spec, entry = self.spec, self.spec.entry_of(case)
        seeds = (case.seed, secret_seed())
        with self.exclusive.work(), self.phase("draw"):
            drawn = timing_draws(spec, case, seeds, self.device)
            timed, check, cand_t, cand_v = drawn.timed, drawn.check, drawn.cand_t, drawn.cand_v
            del drawn  # each set is freed once its last name below goes
        crowded = self.exclusive.crowded_turns
        # The process draws the sets itself from their seeds, with the spec the judge sent it:
        # hundreds of MB that would otherwise cross (kgb.evaluate.draws).
        redraw = Redraw(case.name, seeds) if self.candidate.has_spec else None
        with self.phase("candidate timing"):
            # every tensor the call may write, also inside a list argument (vLLM's copy_blocks
            # takes lists of caches: left out, they came back stale and a correct candidate
            # was judged wrong on the H200)
            written = list(tensors_in([v for n, v in cand_t.items() if n in (*spec.output_args, *spec.inout_args)]))
            try:
                reply, sent, before = self.candidate.time(entry.name, entry.bind(cand_t), entry.bind(cand_v),
                                                          min(repeats, OWN_CLOCK_REPEATS), written, redraw)
            except TurnOverrun as exc:
                raise Failed(Status.TIMEOUT, f"case {case.name}: {exc}") from exc
        if reply.error:
            raise Failed(Status(reply.error["status"]), f"case {case.name}: {reply.error['message']}")
        baseline = None
        if self.known_baselines.get(case.name) is None:  # not measured on this chip before (kgb.tracking.baselines)
            # on set T as drawn, which nothing else reads: a clone of it was one more copy of
            # a bench case's inputs on the GPU at the judge's peak (session 35)
            baseline = self.baseline_on(case, timed, repeats, warmup)
        del timed  # before the replay's copies are made (the baseline keeps what it needs)
        # The replay runs before the reference is computed: its kernels run in this process's
        # CUDA context, where the expected answer must not yet exist.
        staged = TimedCase(case, reply, cand_t, check, baseline, crowded)
        try:
            with self.phase("replay"):
                staged.replay = StagedReplay(reply.value["recording"], sent, before, cand_t, cand_v, entry.bind,
                                             self.replayable_ops, spec.output_args, repeats, warmup, self.exclusive,
                                             self._audit())
        except Unreplayable as exc:
            staged.replay = str(exc)
        except torch.AcceleratorError as exc:  # sticky: no CUDA call in this process works after it
            raise _replay_failed(case, exc) from exc
        except Exception as exc:  # noqa: BLE001 - a recording the judge's Triton cannot load or run
            staged.replay = f"{type(exc).__name__}: {str(exc)[:300]}"
        return staged

    def baseline_on(self, case: Case, timed: dict, repeats: int, warmup: int) -> BaselineTiming:
        """The case's baseline, to be timed on `timed` (its set T): prepared before a turn
        (kgb.evaluate.bench_timing), then called in it."""
        entry = self.spec.entry_of(case)
        _, base_fn = self.baseline(entry.name)
        bargs, bkwargs = entry.bind(timed)
        return BaselineTiming(lambda: base_fn(*bargs, **bkwargs), repeats, warmup, self.phase,
                              tag=f"{self.spec.id} {case.name}")

    def prepare_baselines(self, baselines: list[BaselineTiming | None]) -> None:
        """Their warm-ups, each in a work section of its own (kgb.evaluate.timing.prepare), before
        the turn that times them."""
        for b in baselines:
            if b is not None:
                with self.exclusive.work():
                    b.prepare()

    def measure_baselines(self, baselines: list[tuple[Case, BaselineTiming]]) -> None:
        """Time baselines alone, in one turn of the GPU, as `measure` times a staged case's."""
        with kernel_clock.session(), self.exclusive():
            for case, b in baselines:
                _time_baseline(case, b)

    def measure(self, staged: list[TimedCase]) -> None:
        """Time the staged cases, replay then baseline for each, in one turn of the GPU, inside
        a kernel-clock session that starts before the turn and ends after it."""
        with kernel_clock.session(), self.exclusive():
            for s in staged:
                if isinstance(s.replay, StagedReplay):
                    try:
                        with self.phase("replay"):
                            s.replay.measure()
                    except torch.AcceleratorError as exc:  # sticky: no CUDA call in this process works after it
                        # (a baseline that broke before it has raised already, just below)
                        raise _replay_failed(s.case, exc) from exc
                    except Exception as exc:  # noqa: BLE001 - as when staging it
                        s.replay = f"{type(exc).__name__}: {str(exc)[:300]}"
                if s.baseline is not None:
                    _time_baseline(s.case, s.baseline)

    def finish(self, s: TimedCase) -> tuple[float | None, float | None, str, float | None, TimedBy | None]:
        """(candidate median us, baseline median us, timing mode, spread, whose clock) of a
        measured case, once the replay's and the candidate's last answers are judged; no
        candidate latency where the judge could not replay the call."""
        case, entry, f = s.case, self.spec.entry_of(s.case), s.reply.fields
        replayed: Replayed | str = s.replay if isinstance(s.replay, str) else ""
        if isinstance(s.replay, StagedReplay):
            try:
                with self.phase("replay"):
                    replayed = s.replay.finish()
            except torch.AcceleratorError as exc:
                raise _replay_failed(case, exc) from exc
            except Exception as exc:  # noqa: BLE001 - as when staging it
                replayed = f"{type(exc).__name__}: {str(exc)[:300]}"
        with self.exclusive.work():
            with self.phase("reference"):
                ref_v, s.check = s.check, {}  # the reference's own now: nothing reads set V as drawn after it
                expected = self.reference(entry.name, ref_v, case)
            with self.phase("compare"):
                message, _, _ = self._compare(case, expected, s.reply.value["result"], ref_v, s.cand_t)
                if message:
                    raise Failed(Status.WRONG_OUTPUT, f"after timing, on fresh inputs: {message}")
                if isinstance(replayed, Replayed):
                    message, _, _ = self._compare(case, expected, replayed.result, ref_v, replayed.inputs)
                    if message:
                        # The recorded call computed something else than the answer the candidate
                        # gave: what the judge would time is not what it checked (a decoy for the
                        # recording).
                        raise Failed(Status.REJECTED, f"case {case.name}: the judge's replay of the GPU work "
                                     f"recorded in the candidate's last call computes a wrong answer: {message}")
                    if replayed.audit is not None:
                        def wrong(result: Any, inputs: dict) -> str | None:
                            return compare_outputs(self.spec, case, *self._answers(expected, result, ref_v, inputs))[0]

                        message = replayed.audit.disagreement(expected, ref_v, case.reduction, wrong)
                        if message:
                            # Its checked call was right and some timed one was not: a kernel
                            # that skips its work at random, timed on the calls it skipped.
                            raise Failed(Status.REJECTED, f"case {case.name}: of the judge's calls of the replay, "
                                         f"the checked one was right and {message}")
        base_us, no_baseline = self.known_baselines.get(case.name), ""
        if s.baseline is not None:
            base_us, no_baseline = s.baseline.us, s.baseline.missing
        if isinstance(replayed, str):
            # No latency rather than the candidate's own clock, which it can patch: the case
            # stays correct, and untimed, with the reason.
            return (None, base_us, f"not timed: the judge could not replay the call ({replayed}); "
                    f"its own clock said {float(f['median_us']):.1f} us{no_baseline}", None, None)
        t = replayed.timing
        beside = ("; timed while another evaluation's check ran past the turn's wait for it"
                  if self.exclusive.crowded_turns > s.crowded else "")
        why = [f"{what}: {reason}" for what, reason in ((f"case {case.name}", self.sent_instead.get(case.name)),
                                                        ("its timing", s.reply.sent_instead)) if reason]
        sent = f"; {SENT_NOT_DRAWN} ({'; '.join(why)})" if why else ""
        mode = (t.mode + (f" ({t.note})" if t.note else "") + f"; its own clock said {float(f['median_us']):.1f} us"
                + no_baseline + beside + sent)
        return t.median_us, base_us, mode, t.spread, TimedBy.JUDGE

    def _audit(self) -> CallAudit:
        """The audit of a replay's calls: each call's digest, or some calls kept whole for a spec
        with a comparison of its own, whose outputs have no tolerance to bound a digest with
        (kgb.evaluate.call_audit)."""
        return CallAudit((*self.spec.output_args, *self.spec.inout_args),
                         whole=getattr(self.spec.module, "compare", None) is not None)

    def baseline(self, entry: str) -> tuple[str, Callable[..., Any]]:
        return routine(self.spec, entry, self.device)


def _time_baseline(case: Case, b: BaselineTiming) -> None:
    """Time a baseline inside a turn; one that left this process's CUDA context unusable ends
    the timing of the cases after it."""
    b()
    if b.broke:
        raise InstrumentFailed(f"case {case.name}: {b.broke}")


def _has_elements(expected: Any, ref_in: dict, spec: Spec) -> bool:
    outputs = [expected, *_tensors(ref_in, (*spec.output_args, *spec.inout_args)).values()]

    def count(v: Any) -> int:
        if isinstance(v, torch.Tensor):
            return v.numel()
        if isinstance(v, list | tuple):
            return sum(count(x) for x in v)
        return 1 if v is not None else 0

    return any(count(v) for v in outputs)
