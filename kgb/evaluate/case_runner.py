"""Running one spec's cases against a candidate, in the judge process: each case checked
(draw, reference, the candidate's call, comparison), then the bench cases timed through the
judge's replay of the candidate's recorded GPU work (`stage`, `measure`, `finish`, whose
methods are kgb.evaluate.bench_case's).

What the judge process around it does (forking the candidate processes, the order of the
cases, the verdict) is kgb.evaluate.judge.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from kgb.evaluate import quiet_gate
from kgb.evaluate.bench_case import BenchCaseTiming
from kgb.evaluate.candidate_call import Redraw, Reply, ReplyTooLarge, output_bytes
from kgb.evaluate.candidate_process import CandidateProcess
from kgb.evaluate.correctness import (
    clone_exact,
    compare_outputs,
    release_cached_memory,
    same_bits,
    tensors_in,
)
from kgb.evaluate.draws import candidate_copy, draw_inputs
from kgb.evaluate.first_use import FirstUse
from kgb.evaluate.integrity import ALLOWED_OPS, HOST_READ_LIMIT, Audit
from kgb.evaluate.phases import Phases
from kgb.evaluate.provenance_audit import unexplained, unexplained_loads
from kgb.evaluate.timing_lock import TimingLock, trace
from kgb.evaluate.verdict import CaseResult, Failed, Status
from kgb.operators import Case, Spec


def _tensors(inputs: dict[str, Any], names: tuple[str, ...]) -> dict[str, torch.Tensor]:
    return {n: v for n, v in inputs.items() if n in names and isinstance(v, torch.Tensor)}


def _written(inputs: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    """The written arguments to compare: tensors, and lists of them (vLLM's copy_blocks
    writes a list of caches; left out, a candidate that never wrote them would pass a spec
    without a comparison of its own)."""
    return {n: v for n, v in inputs.items() if n in names and (
        isinstance(v, torch.Tensor) or (isinstance(v, list | tuple) and v and all(isinstance(t, torch.Tensor) for t in v)))}


class CaseRunner(BenchCaseTiming):
    """Runs the cases of one spec against one candidate process."""

    def __init__(self, spec: Spec, candidate: CandidateProcess, device: str, phase: Phases | None = None):
        self.spec, self.candidate, self.device = spec, candidate, device
        self.kernels: list[str] = []
        self.torch_ops: list[str] = []
        self.produced_elements = False  # some case's output is non-empty
        self.stored: dict | None = None  # what the last call's interpreted kernels stored
        self.literals: list[float] = []  # the numbers its source writes (provenance_audit.literal_numbers)
        self.replayable_ops = (ALLOWED_OPS | spec.allowed_torch_ops) - spec.denied_torch_ops
        # the references' first-use compiles, done before their sections (judge v37); none for a
        # spec that draws random numbers (a RANDOM given per case, a function, counts for all)
        self.first_use = FirstUse(device, random=bool(getattr(spec.module, "RANDOM", False)),
                                  changing=lambda: quiet_gate.changing(self.quiet_gate))
        self.phase = phase or Phases()
        # the GPU's timing turn and the work sections it waits for (set by _judge)
        self.exclusive = TimingLock(None, self.phase)
        self.known_baselines: dict[str, float] = {}  # by case name, measured by earlier evaluations
        # why a case's inputs were sent where the candidate process was asked to draw them, by case name
        self.sent_instead: dict[str, str] = {}
        # the GPU's quiet gate (kgb.evaluate.quiet_gate): held shared while this process gives
        # memory back or captures a reference (first_use); and held whole while each replay is
        # measured where `alone_first_calls` (a run again for a case timed by its first call);
        # None: not held
        self.quiet_gate: str | None = None
        self.alone_first_calls = False

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
        if (read := int(fields.get("host_reads", 0))) > HOST_READ_LIMIT:
            raise Failed(Status.REJECTED, f"{what}: the candidate copied {read} values from the GPU to the host "
                         f"(.cpu(), .tolist(), .item(); at most {HOST_READ_LIMIT} in a call, to size a grid or a "
                         "result); values must be computed by Triton kernels on the GPU")

    def _call(self, entry: str, cand_in: dict, what: str, outputs: int, redraw: Redraw | None = None) -> Any:
        """The candidate's answer, its reply no larger than its inputs and the reference's
        `outputs` (their bytes: candidate_call.ReplyBound) justify: a larger one is
        refused unread."""
        args, kwargs = self.spec.signatures[entry].bind(cand_in)
        try:
            reply = self.candidate.call(entry, args, kwargs, redraw, outputs)
        except ReplyTooLarge as exc:
            raise Failed(Status.REJECTED, f"{what}: {exc}") from exc
        if reply.sent_instead and redraw is not None:
            self.sent_instead[redraw.case] = reply.sent_instead
        if (failure := reply.failure) is not None:
            raise Failed(failure[0], f"{what}: {failure[1]}")
        self.audit(reply, what)
        self.stored = reply.stored
        return reply.value

    def released(self) -> None:
        """This process's cached GPU memory given back (`release_cached_memory`), after each case
        and turn. Outside any work section, so traced (TRACE_ENV): whether a timing turn beside
        a release times differently (session 37: some measurements came out 15-25% slow, with
        no section beside them)."""
        began = time.monotonic()
        with self.phase("memory release"), quiet_gate.changing(self.quiet_gate):
            gave_back = release_cached_memory(self.device)
        if gave_back:
            trace("release", began, began, time.monotonic(), tag=self.exclusive.tag)

    def check(self, case: Case, seed: int, redraw: bool = False) -> CaseResult:
        """Check one case on the draw from `seed`; with `redraw`, the candidate process
        draws its copy itself (it has the spec: `CandidateProcess.give_spec`)."""
        spec, entry = self.spec, self.spec.entry_of(case)
        # Work sections of their own (the draw, the reference, the candidate's call, the
        # comparison): no other judge's timing beside any of them (drawing a bench case's inputs
        # on the GPU, and copying them, would take the memory bandwidth it measures), and a turn
        # asked for meanwhile waits for the one running, not all. Between the first two, in no
        # section, the reference's first-use compiles (judge v37).
        with self.exclusive.work(), self.phase("draw"):
            pristine = draw_inputs(spec, case, seed, self.device)
            ref_in, cand_in = clone_exact(pristine), candidate_copy(spec, pristine)
        with self.phase("reference compile"):  # outside any section: nothing runs on the GPU
            self.compile_reference(entry.name, ref_in)
        with self.exclusive.work(), self.phase("reference"):
            expected = self.reference(entry.name, ref_in, case)
            outputs = output_bytes(expected)  # what the candidate's reply may hold, with its inputs
        with self.exclusive.work(), self.phase("candidate"):
            actual = self._call(entry.name, cand_in, f"case {case.name}", outputs,
                                Redraw(case.name, (seed,)) if redraw else None)
        with self.exclusive.work():
            with self.phase("compare"):
                message, max_abs, max_rel = self._compare(case, expected, actual, ref_in, cand_in)
                self.note_elements(expected, ref_in)
                if message is None:
                    message = self._untouched(case, pristine, cand_in)
            if message is None and self.device == "cpu" and spec.kernel_required and self.stored is not None:
                written = _tensors(cand_in, spec.written_args)
                message = (unexplained([actual, *written.values()], self.stored, [pristine])
                           or unexplained_loads(self.stored, [pristine, self.literals]))
                if message:
                    raise Failed(Status.REJECTED, f"case {case.name}: {message}")
            random_flag = getattr(spec.module, "RANDOM", False)
            if message is None and (random_flag(case) if callable(random_flag) else random_flag):
                message = self._fresh_samples(case, entry.name, pristine, actual, cand_in, outputs)
        status = Status.CORRECT if message is None else Status.WRONG_OUTPUT
        return CaseResult(case.name, str(case.tag), status, message or "", max_abs, max_rel)

    def note_elements(self, expected: Any, ref_in: dict) -> None:
        """Whether some case's answer has elements, for the judgement's "launched no kernel"."""
        self.produced_elements |= _has_elements(expected, ref_in, self.spec)

    def compile_reference(self, entry: str, ref_in: dict) -> None:
        """The kernels the reference compiles at their first use, compiled now, where no work
        section is held (kgb.evaluate.first_use)."""
        args, kwargs = self.spec.signatures[entry].bind(ref_in)
        self.first_use.ready(entry, self.spec.reference_for(entry), args, kwargs)

    def reference(self, entry: str, ref_in: dict, case: Case) -> Any:
        args, kwargs = self.spec.signatures[entry].bind(ref_in)
        try:
            with torch.no_grad():
                return self.spec.reference_for(entry)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - reported as what it is: a spec bug
            raise Failed(Status.RUNTIME_ERROR, f"case {case.name}: the spec's reference raised "
                         f"{type(exc).__name__}: {exc} (a bug in the spec, not the candidate)") from exc

    def _fresh_samples(self, case: Case, entry: str, pristine: dict, first: Any, first_in: dict,
                       outputs: int) -> str | None:
        """A random operator must draw new samples on every call, from the same inputs."""
        again_in = candidate_copy(self.spec, pristine)
        second = self._call(entry, again_in, f"case {case.name} (second draw)", outputs)
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
        written = self.spec.written_args
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
        written = self.spec.written_args
        exp = {"return": expected, **_written(ref_in, written)}
        act = {"return": actual, **_written(cand_in, written)}
        return act, exp, cand_in

    def _untouched(self, case: Case, pristine: dict, cand_in: dict) -> str | None:
        written = set(self.spec.written_args)
        for name, before in pristine.items():
            if name in written:
                continue
            # inside lists too (cat's, stack's tensors): until session 44 only a tensor argument was compared
            for after, was in zip(tensors_in(cand_in[name]), tensors_in(before), strict=True):
                if not same_bits(after, was):
                    return f"case {case.name}: the candidate modified its input {name}, which it must not"
        return None


def _has_elements(expected: Any, ref_in: dict, spec: Spec) -> bool:
    outputs = [expected, *_tensors(ref_in, spec.written_args).values()]

    def count(v: Any) -> int:
        if isinstance(v, torch.Tensor):
            return v.numel()
        if isinstance(v, list | tuple):
            return sum(count(x) for x in v)
        return 1 if v is not None else 0

    return any(count(v) for v in outputs)
