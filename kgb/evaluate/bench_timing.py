"""The bench cases' timing turns in the judge process: which cases share a turn, and when
the baselines are timed.

A case's baseline is timed only once its candidate process is gone. That process is still
alive while the judge times its replays, and candidate code can run in it outside every call
the judge makes: a finalizer, a signal from a timer, any hook it leaves behind. GPU work it
queues there runs beside the judge's turn, on the same GPU. Beside the replay that only
slows the candidate; beside the baseline it would slow the baseline, and the candidate's
speedup would grow with it. And the first evaluation of a case on a chip measures the
baseline that every later trial of that case on the chip is given (kgb.tracking.baselines),
so one such candidate would inflate every method's speedup there. Killed and reaped, the
process has taken its CUDA context and its queued work with it (CandidateProcess.close).

So the last turn of a judgement that still has baselines to time comes after the candidate
process is closed, with the last cases' replays and baselines. An operator whose bench cases
take more than one turn (their inputs over TURN_BATCH_BYTES) times its earlier cases'
replays while the process lives and their baselines after, in one more turn, on set T drawn
again from each case's seed: on a chip's first run, 38 of 210 operators on the H200 (session
38's trace). A later run knows every baseline (kgb.tracking.baselines) and times replays only.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator

from kgb.evaluate import quiet_gate
from kgb.evaluate.baseline import BaselineTiming
from kgb.evaluate.bench_case import TURN_BATCH_BYTES, TimedCase
from kgb.evaluate.candidate_process import CandidateProcess
from kgb.evaluate.case_runner import CaseRunner
from kgb.evaluate.correctness import tensors_in
from kgb.evaluate.draws import draw_inputs
from kgb.evaluate.verdict import CaseResult, InstrumentFailed, Status
from kgb.operators import Case


def time_bench_cases(runner: CaseRunner, candidate: CandidateProcess, cases: list[Case], repeats: int,
                     warmup: int, results: list[CaseResult]) -> str:
    """Time the bench cases, each judged by its timing's checks, adding each one's result
    (its latency and baseline) to `results`; "" or what the verdict's message adds about cases
    left untimed."""
    staged: list[TimedCase] = []
    later: list[Case] = []  # cases whose baselines wait for the candidate process to be gone
    # whether any case times its baseline (not measured on this chip before): the candidate
    # process is then killed after its last call and reaped before the last turn
    ending = any(runner.known_baselines.get(c.name) is None for c in cases)
    for n, case in enumerate(cases):
        last = n + 1 == len(cases)
        ender = _Ending(candidate, runner.quiet_gate) if last and ending else None
        # A replay that fails, or a baseline that breaks after one in its turn, fails the
        # candidate (kgb.evaluate.bench_case): no case of it stays correct unreplayed.
        try:
            staged.append(runner.stage(case, repeats, warmup, then=ender.start if ender else None))
            if not last and sum(s.nbytes for s in staged) < TURN_BATCH_BYTES:
                continue  # one turn for the next case too
            if not last:
                later += [s.case for s in staged if s.baseline is not None]
                for s in staged:
                    s.baseline = None
            # The warm-ups may run while the process ends, as beside any judge's GPU work: they
            # only decide whether a call is captured, which the turn decides again.
            runner.prepare_baselines([s.baseline for s in staged])
        finally:
            if ender is not None:
                ender.join()  # reaped: nothing of it runs beside the baselines' turn
        runner.measure(staged)
        for s in staged:
            f = runner.finish(s)
            _record(results, s.case, latency_us=f.latency_us, baseline_us=f.baseline_us, timing_mode=f.timing_mode,
                    latency_spread=f.latency_spread, timed_by=f.timed_by, max_abs_err=f.max_abs_err,
                    max_rel_err=f.max_rel_err, baseline_mode=s.baseline.mode if s.baseline is not None else None,
                    baseline_turn=s.baseline.turn if s.baseline is not None and f.baseline_us is not None else None)
        staged = []
        runner.released()
    try:
        _time_baselines_alone(runner, later, repeats, warmup, results)
    except InstrumentFailed as exc:
        return f"; baselines not timed from {exc}"
    return ""


class _Ending:
    """The candidate process killed and reaped beside the judge, from its last reply on: its
    CUDA context ends while the judge stages that call's replay and warms the baselines up, where
    the judge waited 0.05-0.11 s for it to go after the replay in each view's judgement on an
    H100 (session 60's profile). The GPU's quiet gate is held shared meanwhile, as around every
    process's end (kgb.evaluate.quiet_gate), by this thread alone: the judge's own work may wait
    for a timing turn, which may wait for the gate."""

    def __init__(self, candidate: CandidateProcess, gate: str | None):
        self.thread = threading.Thread(target=self._end, args=(candidate, gate), name="candidate end", daemon=True)
        self.error: BaseException | None = None

    def _end(self, candidate: CandidateProcess, gate: str | None) -> None:
        try:
            with quiet_gate.changing(gate):
                candidate.close()
        except BaseException as exc:  # noqa: BLE001 - raised again by `join`, in the judge's thread
            self.error = exc
            candidate.close()  # without the gate, but ended all the same

    def start(self) -> None:
        self.thread.start()

    def join(self) -> None:
        """Wait for the process to be reaped, if its end was started; what went wrong there
        is raised here."""
        if self.thread.ident is not None:
            self.thread.join()
            if self.error is not None:
                raise self.error


def _time_baselines_alone(runner: CaseRunner, cases: list[Case], repeats: int, warmup: int,
                          results: list[CaseResult]) -> None:
    """The baselines of cases whose replays were timed in an earlier turn, in turns of their own."""
    for batch in baseline_turns(runner, cases, repeats, warmup):
        for case, b in batch:
            i = _index(results, case.name)
            results[i] = dataclasses.replace(results[i], baseline_us=b.us, baseline_mode=b.mode,
                                             baseline_turn=b.turn if b.us is not None else None,
                                             timing_mode=(results[i].timing_mode or "") + b.missing)


def baseline_turns(runner: CaseRunner, cases: list[Case], repeats: int, warmup: int,
                   ready: Callable[[], bool] = lambda: True) -> Iterator[list[tuple[Case, BaselineTiming]]]:
    """The cases' baselines in turns of their own, each on its case's set T drawn again from its
    seed, as many to a turn as TURN_BATCH_BYTES allows; yields each turn's cases once timed.
    `ready` is asked before each turn's first draw: False stops there (kgb.evaluate.baseline_judge
    waits for an idle GPU)."""
    batch: list[tuple[Case, BaselineTiming]] = []
    held = 0
    for n, case in enumerate(cases):
        if not batch and not ready():
            return
        with runner.exclusive.work(), runner.phase("draw"):
            timed = draw_inputs(runner.spec, case, case.seed, runner.device)
        held += sum(t.untyped_storage().nbytes() for t in tensors_in(list(timed.values())))
        batch.append((case, runner.baseline_on(case, timed, repeats, warmup)))
        del timed
        if n + 1 < len(cases) and held < TURN_BATCH_BYTES:
            continue
        runner.prepare_baselines([b for _, b in batch])
        runner.measure_baselines(batch)
        yield batch
        batch, held = [], 0
        runner.released()


def _index(results: list[CaseResult], name: str) -> int:
    return next(i for i, r in enumerate(results) if r.name == name)


def _record(results: list[CaseResult], case: Case, **fields: object) -> None:
    """A timed case's result, judged correct by its timing's checks (kgb.evaluate.bench_case).
    Since judge v33 a timed case has no check before them and its result starts here, but in a
    spec of bench cases alone, which are checked as its only cases."""
    i = next((i for i, r in enumerate(results) if r.name == case.name), None)
    if i is None:
        results.append(CaseResult(case.name, str(case.tag), Status.CORRECT, **fields))
    else:
        results[i] = dataclasses.replace(results[i], **fields)
