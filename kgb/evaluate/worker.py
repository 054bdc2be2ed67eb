"""The worker process: runs one candidate against one spec and writes its verdict.

    python -m kgb.evaluate.worker REQUEST.json

Started by kgb.evaluate.evaluate in a fresh process with its own temp dir, Triton cache
and scrubbed environment, so a crash, a hang or a corrupted CUDA context costs only this
process. Each finished case is appended to the result file as one JSON line, so the
harness knows how far a worker got before it died.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from kgb.evaluate.correctness import clone_exact, compare_outputs, poison_, same_bits
from kgb.evaluate.integrity import ALLOWED_OPS, audited
from kgb.evaluate.verdict import CaseResult, Status
from kgb.operators import Case, Spec, _import_file, load_spec

FRESH_SEED_OFFSET = 1_000_003  # the second run of a case draws new inputs


class Failed(Exception):
    """Ends the evaluation with a status and a message."""

    def __init__(self, status: Status, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def _classify(exc: BaseException) -> Status:
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & {"CompilationError", "CompileTimeAssertionFailure", "PTXASError", "SyntaxError"}:
        return Status.COMPILE_ERROR
    return Status.RUNTIME_ERROR


def _short_traceback(exc: BaseException, limit: int = 6) -> str:
    lines = traceback.format_exception(exc, limit=-limit)
    return "".join(lines).strip()[-3000:]


def _tensors(inputs: dict[str, Any], names: tuple[str, ...]) -> dict[str, torch.Tensor]:
    return {n: v for n, v in inputs.items() if n in names and isinstance(v, torch.Tensor)}


def _fill_allocator_with_garbage(device: str) -> None:
    """Fresh allocations by the candidate then start out as NaN bytes, not zeros."""
    if device == "cuda":
        junk = torch.empty(64 * 1024 * 1024, dtype=torch.uint8, device=device)
        junk.fill_(0xFF)
        del junk


class CaseRunner:
    """Runs the cases of one spec against one candidate module."""

    def __init__(self, spec: Spec, candidate: Any, device: str, timed: frozenset[str] = frozenset()):
        self.spec, self.candidate, self.device = spec, candidate, device
        # Inputs of the cases to be timed are kept from their check: drawing a bench case's
        # hundreds of MB again on the host's generator would cost more than timing it.
        self.timed, self.kept = timed, {}
        self.kernels: list[str] = []
        self.torch_ops: list[str] = []
        self.produced_elements = False  # some case's output is non-empty

    def inputs(self, case: Case, seed: int) -> dict[str, Any]:
        gen = torch.Generator().manual_seed(seed)
        return self.spec.module.make_inputs(case, gen, self.device)

    def check(self, case: Case, seed: int) -> CaseResult:
        spec, entry = self.spec, self.spec.entry_of(case)
        pristine = self.inputs(case, seed)
        if case.name in self.timed and seed == case.seed:
            self.kept[case.name] = pristine
        ref_in, cand_in = clone_exact(pristine), clone_exact(pristine)
        for t in _tensors(cand_in, spec.output_args).values():
            poison_(t)
        args, kwargs = entry.bind(ref_in)
        try:
            with torch.no_grad():
                expected = spec.reference_for(entry.name)(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - reported as what it is: a spec bug
            raise Failed(Status.RUNTIME_ERROR, f"case {case.name}: the spec's reference raised "
                         f"{type(exc).__name__}: {exc} (a bug in the spec, not the candidate)") from exc
        fn = getattr(self.candidate, entry.name)
        args, kwargs = entry.bind(cand_in)
        _fill_allocator_with_garbage(self.device)
        try:
            with torch.no_grad(), audited() as audit:
                actual = fn(*args, **kwargs)
                if self.device == "cuda":
                    torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - the candidate's failure is the verdict
            raise Failed(_classify(exc), f"case {case.name}: {type(exc).__name__}: {exc}\n{_short_traceback(exc)}") from exc
        self.kernels += audit.kernels
        self.torch_ops += audit.torch_ops
        bad = audit.violations(ALLOWED_OPS | spec.allowed_torch_ops, spec.denied_torch_ops)
        if bad:
            raise Failed(
                Status.REJECTED,
                f"case {case.name}: the candidate computed with PyTorch ({', '.join(bad)}); "
                "values must be computed by Triton kernels",
            )
        message, max_abs, max_rel = self._compare(case, expected, actual, ref_in, cand_in)
        self.produced_elements |= _has_elements(expected, ref_in, spec)
        if message is None:
            message = self._untouched(case, pristine, cand_in)
        status = Status.CORRECT if message is None else Status.WRONG_OUTPUT
        return CaseResult(case.name, str(case.tag), status, message or "", max_abs, max_rel)

    def _compare(self, case, expected, actual, ref_in, cand_in) -> tuple[str | None, float | None, float | None]:
        written = (*self.spec.output_args, *self.spec.inout_args)
        exp = {"return": expected, **_tensors(ref_in, written)}
        act = {"return": actual, **_tensors(cand_in, written)}
        message, max_abs, max_rel = compare_outputs(self.spec, case, act, exp, cand_in)
        return (f"case {case.name}: {message}" if message else None), max_abs, max_rel

    def _untouched(self, case: Case, pristine: dict, cand_in: dict) -> str | None:
        written = set(self.spec.output_args) | set(self.spec.inout_args)
        for name, before in pristine.items():
            if name in written or not isinstance(before, torch.Tensor):
                continue
            if not same_bits(cand_in[name], before):
                return f"case {case.name}: the candidate modified its input {name}, which it must not"
        return None

    def time(self, case: Case, seed: int, repeats: int, warmup: int) -> tuple[float, float, str, float]:
        """(candidate median us, baseline median us, timing mode, spread)."""
        from kgb.evaluate.timing import measure

        entry = self.spec.entry_of(case)
        pristine = self.kept.pop(case.name, None) if seed == case.seed else None
        if pristine is None:
            pristine = self.inputs(case, seed)
        args, kwargs = entry.bind(clone_exact(pristine))
        fn = getattr(self.candidate, entry.name)
        cand = measure(lambda: fn(*args, **kwargs), repeats, warmup)
        _, base_fn = self.baseline(entry.name)
        bargs, bkwargs = entry.bind(clone_exact(pristine))
        base = measure(lambda: base_fn(*bargs, **bkwargs), repeats, warmup)
        return cand.median_us, base.median_us, cand.mode, cand.spread

    def baseline(self, entry: str) -> tuple[str, Callable[..., Any]]:
        hook = getattr(self.spec.module, "speed_baseline", None)
        if hook is not None:
            found = hook(entry, self.device)
            if found is not None:
                return found
        return "torch", self.spec.reference_for(entry)


def _has_elements(expected: Any, ref_in: dict, spec: Spec) -> bool:
    outputs = [expected, *_tensors(ref_in, (*spec.output_args, *spec.inout_args)).values()]

    def count(v: Any) -> int:
        if isinstance(v, torch.Tensor):
            return v.numel()
        if isinstance(v, list | tuple):
            return sum(count(x) for x in v)
        return 1 if v is not None else 0

    return any(count(v) for v in outputs)


def _fix_interpreter_bf16_dot() -> None:
    """Triton's CPU interpreter keeps bfloat16 as raw uint16 and multiplies those integers
    in tl.dot (seen in Triton 3.9). Widening bf16 operands to float32 first is exact, and
    makes a candidate's native bf16 dot judged as it would run on a GPU."""
    import numpy as np
    import triton.language as tl
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle

    original = InterpreterBuilder.create_dot
    if getattr(original, "_kgb_fixed", False):
        return

    def widened(h):
        if h.dtype.scalar == tl.bfloat16 and h.data.dtype == np.uint16:
            return TensorHandle((h.data.astype(np.uint32) << 16).view(np.float32), tl.float32)
        return h

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        return original(self, widened(a), widened(b), d, input_precision, max_num_imprecise_acc)

    create_dot._kgb_fixed = True  # type: ignore[attr-defined]
    InterpreterBuilder.create_dot = create_dot


def _autotune_without_benchmarks() -> None:
    """On a host without a GPU, Triton's autotuner has no benchmarker and fails before
    the first launch. In the interpreter, an autotuned kernel therefore runs its first
    config: speed means nothing there, and any config a GPU picks must be correct."""
    from triton.runtime.autotuner import Autotuner

    Autotuner.prune_configs = lambda self, kwargs, *args, **kw: self.configs[:1]


def prepare_interpreter() -> None:
    _fix_interpreter_bf16_dot()
    _autotune_without_benchmarks()


def run(request: dict, emit: Callable[[dict], None]) -> dict:
    """Evaluate; emit each case result; return the final verdict fields."""
    spec = load_spec(Path(request["spec"]))
    device = request["device"]
    if device == "cpu":
        prepare_interpreter()
    torch.manual_seed(0)
    try:
        candidate = _import_file(Path(request["candidate"]), "candidate")
    except BaseException as exc:  # noqa: BLE001 - a broken import is the verdict
        return {"status": Status.COMPILE_ERROR, "message": f"importing the candidate failed: {type(exc).__name__}: {exc}\n{_short_traceback(exc)}"}
    missing = [e for e in spec.signatures if not callable(getattr(candidate, e, None))]
    if missing:
        return {"status": Status.REJECTED, "message": f"the candidate does not define {', '.join(missing)}"}

    tags = set(request["case_tags"])
    cases = [c for c in spec.cases if c.tag in tags]
    timed = [c for c in cases if c.tag in set(request["time_tags"])] if device != "cpu" else []
    runner = CaseRunner(spec, candidate, device, frozenset(c.name for c in timed))
    results: list[CaseResult] = []
    try:
        for case in cases:
            result = runner.check(case, case.seed)
            emit(dataclasses.asdict(result))
            results.append(result)
            if result.status != Status.CORRECT:
                return _final(Status.WRONG_OUTPUT, result.message, results, runner)
        if cases:
            again = runner.check(cases[0], cases[0].seed + FRESH_SEED_OFFSET)
            if again.status != Status.CORRECT:
                return _final(Status.WRONG_OUTPUT, f"on fresh inputs: {again.message}", results, runner)
        for case in timed:
            lat, base, mode, spread = runner.time(case, case.seed, request["repeats"], request["warmup"])
            i = next(i for i, r in enumerate(results) if r.name == case.name)
            results[i] = dataclasses.replace(
                results[i], latency_us=lat, baseline_us=base, timing_mode=mode, latency_spread=spread
            )
    except Failed as f:
        return _final(f.status, f.message, results, runner)
    if spec.kernel_required and runner.produced_elements and not runner.kernels:
        # Judged over the whole evaluation, not per case: a case with nothing to compute
        # (k == 0) may rightly return zeros without a launch.
        return _final(Status.REJECTED, "launched no Triton kernel in any case", results, runner)
    baseline = runner.baseline(next(iter(spec.signatures)))[0] if timed else None
    n = len(cases)
    return _final(Status.CORRECT, f"all {n} cases correct", results, runner, baseline)


def _final(status, message, results, runner, baseline=None) -> dict:
    return {
        "status": status,
        "message": message,
        "cases": [dataclasses.asdict(r) for r in results],
        "kernels": sorted(set(runner.kernels)),
        "torch_ops": sorted(set(runner.torch_ops)),
        "baseline": baseline,
    }


def main() -> None:
    request = json.loads(Path(sys.argv[1]).read_text())
    out = Path(request["result"])
    started = time.perf_counter()

    def emit(case: dict) -> None:
        with out.open("a") as f:
            f.write(json.dumps({"case": case}) + "\n")

    final = run(request, emit)
    final["eval_s"] = time.perf_counter() - started
    with out.open("a") as f:
        f.write(json.dumps({"final": final}) + "\n")


if __name__ == "__main__":
    main()
