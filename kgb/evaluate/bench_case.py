"""A spec's bench cases timed (judge side): each staged for a timing turn of the GPU, measured
in it and judged after it (`BenchCaseTiming.stage`, `measure`, `finish`), with the baselines
prepared and timed around them. Mixed into kgb.evaluate.case_runner.CaseRunner, whose checks
(the reference, the comparison) it builds on; the order of the turns, and when the candidate
process is closed, is kgb.evaluate.bench_timing's.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from kgb.evaluate import gpus, kernel_clock
from kgb.evaluate.baseline import BaselineTiming, routine
from kgb.evaluate.call_audit import CallAudit
from kgb.evaluate.candidate_call import Redraw, Reply, ReplyTooLarge
from kgb.evaluate.candidate_process import TurnOverrun
from kgb.evaluate.correctness import compare_outputs
from kgb.evaluate.draws import draw_inputs, timing_draws
from kgb.evaluate.recording import Unreplayable
from kgb.evaluate.staged_replay import Replayed, StagedReplay
from kgb.evaluate.verdict import CROWDED_TURN, Failed, InstrumentFailed, Status, TimedBy, Turn
from kgb.operators import Case

if TYPE_CHECKING:
    from kgb.evaluate.case_runner import CaseRunner

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


def _replay_error(case: Case, exc: Exception) -> Failed:
    """How a replay that raised fails the candidate. No `correct` on a GPU without the judge's
    own replay of every bench case: what a candidate process reports of itself (its ops, its
    recording) is the candidate's to forge, and a forger that made its recording unreplayable
    kept an untimed `correct` (up to judge v25). A CUDA error (sticky: no CUDA call in this
    process works after it) is the candidate's kernels faulting in the judge's context, or
    running out of memory: a runtime error that says so, which kgb.evaluate runs again alone
    where other judges shared the GPU."""
    if isinstance(exc, torch.AcceleratorError):
        return Failed(Status.RUNTIME_ERROR, f"case {case.name}: the judge's replay of the recorded call failed: "
                      f"{str(exc).splitlines()[0][:300]}")
    # Unreplayable says why itself; anything else is a recording the judge's Triton cannot load or run
    reason = str(exc) if isinstance(exc, Unreplayable) else f"{type(exc).__name__}: {str(exc)[:300]}"
    if gpus.out_of_memory(reason):
        return Failed(Status.RUNTIME_ERROR, f"case {case.name}: the judge's replay of the recorded call ran out "
                      f"of GPU memory ({reason})")
    return Failed(Status.REJECTED, f"case {case.name}: the judge cannot replay the GPU work recorded in the "
                  f"candidate's call ({reason}); on a GPU a candidate is correct only where the judge's own "
                  f"replay of each bench case checks it (docs/design/threat-model.md)")


@dataclasses.dataclass
class TimedCase:
    """A bench case on its way through the timing turn (CaseRunner.stage, measure, finish)."""
    case: Case
    reply: Reply  # the candidate process's: the recording of its call on set V, and its audit
    check: dict  # set V as drawn, for the reference
    baseline: BaselineTiming | None  # None: measured by an earlier evaluation
    replay: StagedReplay | None = None  # the judge's replay of the recorded call, once staged
    turn: Turn | None = None  # how its turn went, once measured

    @property
    def nbytes(self) -> int:
        return self.replay.nbytes if isinstance(self.replay, StagedReplay) else 0


@dataclasses.dataclass(frozen=True)
class Finished:
    """A timed case's outcome (`BenchCaseTiming.finish`)."""
    latency_us: float | None  # the replay's median
    baseline_us: float | None
    timing_mode: str
    latency_spread: float | None
    timed_by: TimedBy
    max_abs_err: float | None  # of the judge's replay's answer on set V (judge v35)
    max_rel_err: float | None


def secret_seed() -> int:
    return random.SystemRandom().randrange(1 << 62)


class BenchCaseTiming:
    """CaseRunner's bench-case methods (kgb.evaluate.case_runner): what they use of it is its
    spec, candidate process, timing lock, known baselines and comparison."""

    def stage(self: CaseRunner, case: Case, repeats: int, warmup: int,
              then: Callable[[], None] | None = None) -> TimedCase:
        """A bench case made ready for the timing turn; `measure` times staged cases in one
        turn, then `finish` judges each and says its latency. Since judge v33 that is the
        case's only check: it is not checked on its own seed first.

        The candidate process rebuilds every input it receives, so the timed calls never see
        the objects of its other cases. It makes one call on set T, which loads its kernels,
        then one that is recorded, on T's buffers with set V's values (a draw from a secret
        seed) loaded: the judge replays that GPU work under its own clock
        (kgb.evaluate.replay), times the replay and judges the replay's answer on set V. That
        call is audited as a checked call is. Since judge v35 nothing the process computes on a
        timed case comes back, nor is checked: the replay's answer is what the verdict stood on
        already. Until then the process made a last call on set V, whose answer crossed back
        and was compared for nothing more (aten::reshape: 384 MB of replies), and which was
        the one audited (from v33): a call the judge does not replay.

        `then`: called once the candidate process has replied to the case's call (the judge's
        last call of it ends the process then: kgb.evaluate.bench_timing).

        The process that checked the candidate times it too, once its checks are done, though
        it has seen set T's values (the bench case's own seed): an answer it remembers from
        there is right for set T only. If its recorded call reads it, the replay gets set T's
        answer on set V's values; if the call returns it, v14 poisons it first. (Until v15 a
        second candidate process timed, which had seen no check input: one more CUDA context
        per evaluation to start, on a host where starting them was what a sweep waited for;
        on the H200 a sweep of 210 operators took 294 s without it where it took 427 s with
        it, session 30.)
        """
        spec, entry = self.spec, self.spec.entry_of(case)
        seeds = (case.seed, secret_seed())
        with self.exclusive.work(), self.phase("draw"):
            drawn = timing_draws(spec, case, seeds, self.device)
            timed, check, cand_t, cand_v = drawn.timed, drawn.check, drawn.cand_t, drawn.cand_v
            del drawn  # each set is freed once its last name below goes
        # The process draws the sets itself from their seeds, with the spec the judge sent it:
        # hundreds of MB that would otherwise cross (kgb.evaluate.draws).
        redraw = Redraw(case.name, seeds) if self.candidate.has_spec else None
        with self.phase("candidate timing"):
            try:
                reply, sent, before = self.candidate.time(entry.name, entry.bind(cand_t), entry.bind(cand_v), redraw)
            except TurnOverrun as exc:
                raise Failed(Status.TIMEOUT, f"case {case.name}: {exc}") from exc
            except ReplyTooLarge as exc:
                raise Failed(Status.REJECTED, f"case {case.name}: {exc}") from exc
        if then is not None:
            then()
        if (failure := reply.failure) is not None:
            raise Failed(failure[0], f"case {case.name}: {failure[1]}")
        self.audit(reply, f"case {case.name}")  # its recorded call, as a checked call's (judge v35)
        baseline = None
        if self.known_baselines.get(case.name) is None:  # not measured on this chip before (kgb.tracking.baselines)
            # on set T as drawn, which nothing else reads: a clone of it was one more copy of
            # a bench case's inputs on the GPU at the judge's peak (session 35)
            baseline = self.baseline_on(case, timed, repeats, warmup)
        del timed  # before the replay's copies are made (the baseline keeps what it needs)
        # The replay runs before the reference is computed: its kernels run in this process's
        # CUDA context, where the expected answer must not yet exist.
        staged = TimedCase(case, reply, check, baseline)
        try:
            with self.phase("replay"):
                staged.replay = StagedReplay(reply.value["recording"], sent, before, cand_t, cand_v, entry.bind,
                                             self.replayable_ops, spec.output_args, repeats, warmup, self.exclusive,
                                             self._audit(), tag=f"{spec.id} {case.name}",
                                             turned_args=spec.turned_args,
                                             fresh=lambda: draw_inputs(spec, case, secret_seed(), self.device),
                                             alone_gate=self.quiet_gate if self.alone_first_calls else None)
        except Exception as exc:  # noqa: BLE001 - each way a replay fails fails the candidate
            raise _replay_error(case, exc) from exc
        return staged

    def baseline_on(self: CaseRunner, case: Case, timed: dict, repeats: int, warmup: int) -> BaselineTiming:
        """The case's baseline, to be timed on `timed` (its set T): prepared before a turn
        (kgb.evaluate.bench_timing), then called in it."""
        entry = self.spec.entry_of(case)
        _, base_fn = self.baseline(entry.name)
        bargs, bkwargs = entry.bind(timed)
        return BaselineTiming(lambda: base_fn(*bargs, **bkwargs), repeats, warmup, self.phase,
                              tag=f"{self.spec.id} {case.name}")

    def prepare_baselines(self: CaseRunner, baselines: list[BaselineTiming | None]) -> None:
        """Their warm-ups, each in a work section of its own (kgb.evaluate.timing.prepare), before
        the turn that times them."""
        for b in baselines:
            if b is not None:
                with self.exclusive.work():
                    b.prepare()

    def measure_baselines(self: CaseRunner, baselines: list[tuple[Case, BaselineTiming]]) -> None:
        """Time baselines alone, in one turn of the GPU, as `measure` times a staged case's."""
        crowded_before = self.exclusive.crowded_turns
        with kernel_clock.session(), self.exclusive():
            for case, b in baselines:
                _time_baseline(case, b)
        turn = self._turn_since(crowded_before)
        for _, b in baselines:
            b.turn = turn

    def _turn_since(self: CaseRunner, crowded_before: int) -> Turn:
        """How the turn just ended went, from the judge's count of crowded turns before it."""
        return Turn.CROWDED if self.exclusive.crowded_turns > crowded_before else Turn.ALONE

    def measure(self: CaseRunner, staged: list[TimedCase]) -> None:
        """Time the staged cases, replay then baseline for each, in one turn of the GPU, inside
        a kernel-clock session that starts before the turn and ends after it."""
        crowded_before = self.exclusive.crowded_turns
        with kernel_clock.session(), self.exclusive():
            for s in staged:
                if isinstance(s.replay, StagedReplay):
                    try:
                        with self.phase("replay"):
                            s.replay.measure()
                    except Exception as exc:  # noqa: BLE001 - as when staging it
                        raise _replay_error(s.case, exc) from exc
                if s.baseline is not None:
                    try:
                        _time_baseline(s.case, s.baseline)
                    except InstrumentFailed as exc:
                        # CUDA reports a kernel's fault at a later call of its context: a baseline
                        # that breaks after the candidate's kernels were replayed is taken as
                        # theirs, and the replays of this turn can no longer be checked.
                        raise Failed(Status.RUNTIME_ERROR, f"{exc}, after the judge's replay of the "
                                     f"candidate's recorded call ran in its CUDA context") from exc
        turn = self._turn_since(crowded_before)
        for s in staged:
            s.turn = turn
            if s.baseline is not None:
                s.baseline.turn = turn

    def finish(self: CaseRunner, s: TimedCase) -> Finished:
        """A measured case's result, once the replay's answer is judged: since judge v33 the
        only check of a timed case (its inputs and the judge's replay of the candidate's GPU
        work on them set V's, drawn from a secret seed), where a check on the case's own seed
        came first before; until v34 the candidate process's own answer on set V was judged
        too."""
        case, entry = s.case, self.spec.entry_of(s.case)
        if s.replay is None:
            raise _replay_error(case, Unreplayable("no replay was staged"))
        try:
            with self.phase("replay"):
                replayed: Replayed = s.replay.finish()
        except Exception as exc:  # noqa: BLE001 - as when staging it
            raise _replay_error(case, exc) from exc
        with self.exclusive.work():
            with self.phase("reference"):
                ref_v, s.check = s.check, {}  # the reference's own now: nothing reads set V as drawn after it
                expected = self.reference(entry.name, ref_v, case)
            with self.phase("compare"):
                # set V's values as sent, which the judge's calls never run on, against what the
                # replay's checked call left in the arguments it must not write
                message = self._untouched(case, s.replay.v_in, replayed.inputs)
                if message:
                    raise Failed(Status.WRONG_OUTPUT, f"after timing, on fresh inputs: {message}")
                message, max_abs, max_rel = self._compare(case, expected, replayed.result, ref_v, replayed.inputs)
                if message:
                    # A kernel wrong at a bench case's size, or a recorded call that computed
                    # something else than what the candidate answers elsewhere (a decoy for the
                    # recording, an answer kept from an earlier call): the judge cannot tell them
                    # apart, and times neither.
                    raise Failed(Status.WRONG_OUTPUT, f"after timing, on fresh inputs: {message} (the judge's "
                                 "replay of the GPU work recorded in the candidate's call)")
                self.note_elements(expected, ref_v)
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
        t = replayed.timing
        beside = f"; {CROWDED_TURN}" if s.turn is Turn.CROWDED else ""
        why = [f"{what}: {reason}" for what, reason in ((f"case {case.name}", self.sent_instead.get(case.name)),
                                                        ("its timing", s.reply.sent_instead)) if reason]
        sent = f"; {SENT_NOT_DRAWN} ({'; '.join(why)})" if why else ""
        mode = t.mode + (f" ({t.note})" if t.note else "") + no_baseline + beside + sent
        return Finished(t.median_us, base_us, mode, t.spread, TimedBy.FIRST_CALL if t.by_first_call else TimedBy.JUDGE,
                        max_abs, max_rel)

    def _audit(self: CaseRunner) -> CallAudit:
        """The audit of a replay's calls: each call's digest, or some calls kept whole for a spec
        with a comparison of its own, whose outputs have no tolerance to bound a digest with
        (kgb.evaluate.call_audit)."""
        return CallAudit(self.spec.written_args,
                         whole=getattr(self.spec.module, "compare", None) is not None)

    def baseline(self: CaseRunner, entry: str) -> tuple[str, Callable[..., Any]]:
        return routine(self.spec, entry, self.device)


def _time_baseline(case: Case, b: BaselineTiming) -> None:
    """Time a baseline inside a turn; one that left this process's CUDA context unusable ends
    the timing of the cases after it."""
    b()
    if b.broke:
        raise InstrumentFailed(f"case {case.name}: {b.broke}")
