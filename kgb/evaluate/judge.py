"""The judge process: draws the inputs, runs the reference, compares, times, decides.

    python -m kgb.evaluate.judge REQUEST.json

Started by kgb.evaluate.evaluate (or forked by its warm engine) with a scrubbed
environment. It never imports the candidate: it forks a sandboxed candidate process
(kgb.evaluate.candidate) before touching the GPU and sends it inputs; the reference, the
cases' seeds, the comparison and the verdict stay here, out of the candidate's reach
(the cases themselves run in kgb.evaluate.case_runner). Each finished case is appended to
the result file as one JSON line, so the harness knows how far an evaluation got before it
died.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import torch

from kgb.evaluate import (
    baseline_judge,
    baselines_ahead,
    codec,
    cuda_waits,
    kernel_clock,
    memory_ledger,
    quiet_gate,
)
from kgb.evaluate.bench_case import secret_seed
from kgb.evaluate.bench_timing import time_bench_cases
from kgb.evaluate.candidate_process import CandidateDied, CandidateProcess
from kgb.evaluate.case_runner import CaseRunner
from kgb.evaluate.phases import Phases
from kgb.evaluate.provenance_audit import literal_numbers
from kgb.evaluate.sandbox import Limits, die_with_parent
from kgb.evaluate.timing_lock import TimingLock, trace
from kgb.evaluate.verdict import CaseResult, Failed, Status
from kgb.operators import Spec, load_spec

FRESH_RERUNS = 3  # cases re-checked on inputs drawn from seeds no one can know in advance
WAIT_FOR_MEMORY = "waiting for the GPU's memory"  # the phase of a wait for the bench cases' reservation


def draws_bench_inputs(device: str) -> bool:
    """Whether the candidate process draws the bench cases' inputs itself: on a GPU they are
    hundreds of MB, drawn in milliseconds; on the CPU a draw takes seconds, and crossing in a
    memory file less (and only smoke cases run there)."""
    return device != "cpu"


def start_candidate(device: str, workspace: Path, limits: Limits, gate: str | None = None) -> CandidateProcess:
    """The candidate process, forked before this process touches the GPU, and ready; one that
    dies before any candidate code ran is started again once (seen once, as a SIGSEGV on a
    heavily loaded host): that is the machine, not the candidate. (This process starting its
    own CUDA while it starts, where it could no longer fork another, made no sweep faster on
    the H200, session 29.) `gate`: the GPU's quiet gate (kgb.evaluate.quiet_gate), held
    shared while it starts."""
    began = time.monotonic()
    with quiet_gate.changing(gate):
        try:
            ready = CandidateProcess(device, workspace, limits).wait_ready()
        except CandidateDied:
            ready = CandidateProcess(device, workspace, limits).wait_ready()
    # Starting CUDA takes no work section: a turn would wait seconds for a start on a loaded
    # host. Traced, to see whether the turns beside starts time differently (TRACE_ENV).
    trace("start", began, began, time.monotonic())
    if device == "cuda":
        cuda_waits.apply()  # this process's own CUDA starts later, now that its candidate's forked
    return ready


def _keep_out_of_the_workspace(private: Path) -> None:
    """The judge's own scratch and Triton cache, away from the workspace its candidate
    processes can write. Triton loads a launcher it finds in its cache by a hash anyone can
    compute, and compiles in a temporary folder: in the workspace, a planted or swapped file
    would run in the judge when it replays the candidate's launches (kgb.evaluate.replay).
    Set after the candidate processes are forked, so theirs stay in the workspace."""
    private.mkdir(parents=True, exist_ok=True)
    cache = os.environ.get("KGB_DRIVER_CACHE") or str(private / "triton-cache")
    # PyTorch compiles some of its own kernels at first use (jiterator: polygamma, i0 and
    # other special functions) and keeps them under HOME, which is the workspace: each
    # judgement compiled them again, inside a work section that a timing turn waited for
    kernels = os.environ.get("KGB_TORCH_KERNEL_CACHE") or str(private / "torch-kernels")
    # made here: PyTorch does not make it where judges starting side by side race to (on the
    # H200, session 25, judges warned that they could not and compiled those kernels again)
    Path(kernels).mkdir(parents=True, exist_ok=True)
    os.environ.update(TMPDIR=str(private), TRITON_CACHE_DIR=cache, PYTORCH_KERNEL_CACHE_PATH=kernels,
                      # the rest of what the engine set to the workspace for its candidate processes:
                      # nothing the judge's libraries look up (the CUDA driver's JIT cache, Triton's
                      # home, a user's config files) may be read from where a candidate writes
                      HOME=str(private), TRITON_HOME=str(private), CUDA_CACHE_PATH=str(private / "cuda-cache"),
                      TORCHINDUCTOR_CACHE_DIR=str(private / "inductor-cache"))
    tempfile.tempdir = str(private)
    try:
        import triton

        triton.knobs.cache.dir = cache
    except (ImportError, AttributeError):
        pass


def limits_of(request: dict) -> Limits:
    return Limits(cpu_s=int(request.get("timeout_s", 600)) + 5)


def run(request: dict, emit: Callable[[dict], None], started: CandidateProcess | None = None) -> dict:
    """Evaluate; emit each case result; return the final verdict fields. `started`: the
    candidate process a spare judge started for this workspace before the request came
    (kgb.evaluate.spare)."""
    phase = Phases()
    device = request["device"]
    workspace = Path(request["workspace"])
    workspace.mkdir(parents=True, exist_ok=True)
    limits = limits_of(request)
    gate = quiet_gate.gate_of(request.get("timing_lock"))
    try:  # forked before this process touches the GPU, and before it loads the spec: the
        # candidate process gets none of its hidden cases (kgb.shown_spec)
        with phase("process start"):
            candidate = started if started is not None else start_candidate(device, workspace, limits, gate)
    except CandidateDied as exc:
        return {"status": Status.RUNTIME_ERROR, "message": f"the candidate process could not start: {exc}"}
    try:
        with phase("spec"):
            spec = load_spec(Path(request["spec"]))
        _keep_out_of_the_workspace(workspace.parent / "judge")
        return _judge(spec, candidate, request, emit, phase, gate)
    finally:
        candidate.close(wait=False)


def _judge(spec: Spec, candidate: CandidateProcess, request: dict, emit: Callable[[dict], None],
           phase: Phases, gate: str | None) -> dict:
    device = request["device"]
    emit_sandbox = {"sandbox": candidate.sandbox, "sandbox_notes": candidate.notes}
    tags = set(request["case_tags"])
    cases = [c for c in spec.cases if c.tag in tags]
    timed = [c for c in cases if c.tag in set(request["time_tags"])] if device != "cpu" else []
    runner = CaseRunner(spec, candidate, device, phase)
    runner.literals = literal_numbers(request["source"]) if device == "cpu" else []
    runner.exclusive = TimingLock(request.get("timing_lock"), runner.phase,
                                  torch.cuda.synchronize if device == "cuda" else lambda: None)
    runner.exclusive.tag = spec.id
    runner.quiet_gate = gate
    # a run again for a case timed by its first call (judge v31)
    runner.alone_first_calls = bool(request.get("alone_first_calls"))
    candidate.exclusive = runner.exclusive  # let go of while it compiles and while data crosses
    results: list[CaseResult] = []
    bench_memory = ExitStack()  # the GPU memory reserved for the bench cases (kgb.evaluate.memory_ledger)
    try:
        with runner.phase("import"), runner.exclusive.work():  # its import may launch GPU work
            loaded = candidate.load(request["source"])
        if (failure := loaded.failure) is not None:
            return _final(*failure, results, runner, **emit_sandbox)
        runner.audit(loaded, "at import")

        def checked(result: CaseResult) -> bool:
            runner.released()  # as the candidate process does after each call
            emit(dataclasses.asdict(result))
            results.append(result)
            return result.status == Status.CORRECT

        # Bench cases last: by then every other case is checked, on its own seed and again on
        # secret ones, so the candidate process may have the spec (the seeds) and draw their
        # hundreds of MB itself (CaseRunner.check's redraw), where they would cross.
        plain = [c for c in cases if c.tag != "bench"]
        benched = [c for c in cases if c.tag == "bench"] if plain else []
        for case in plain or cases:
            if not checked(result := runner.check(case, case.seed)):
                return _final(Status.WRONG_OUTPUT, result.message, results, runner, **emit_sandbox)
        # Bench cases get fresh inputs when timed; re-check among the others, where draws are cheap.
        pool = plain or cases
        for case in random.SystemRandom().sample(pool, min(FRESH_RERUNS, len(pool))):
            again = runner.check(case, secret_seed())
            if again.status != Status.CORRECT:
                return _final(Status.WRONG_OUTPUT, f"on fresh inputs: {again.message}", results, runner, **emit_sandbox)
        ledger = memory_ledger.for_request(request) if benched or timed else None
        if ledger is not None:
            bench_memory.enter_context(ledger.reserved(request["gpu_mib"], lambda: runner.phase(WAIT_FOR_MEMORY),
                                                       tag=spec.id))
        redraw = bool(benched) and draws_bench_inputs(device)
        if redraw:
            candidate.give_spec(spec)
        # A case to be timed is judged by its timing's checks alone (judge v33): the judge's
        # replay of the candidate process's recorded GPU work on set V, a draw from a secret
        # seed, which is what a GPU's verdict stands on. A check on the
        # case's own seed before them cost each bench case another draw, call, crossing of
        # its outputs and comparison (aten::reshape: half its 768 MB of replies).
        for case in [c for c in benched if c not in timed]:
            if not checked(result := runner.check(case, case.seed, redraw=redraw)):
                return _final(Status.WRONG_OUTPUT, result.message, results, runner, **emit_sandbox)
        runner.known_baselines = {str(k): float(v) for k, v in dict(request.get("baselines") or {}).items()}
        if timed and device == "cuda":
            with runner.phase("clock warm-up"):  # done already in a spare judge
                kernel_clock.warm_up()
        not_timed = time_bench_cases(runner, candidate, timed, request["repeats"], request["warmup"], results)
        bench_memory.close()
    except Failed as f:
        return _final(f.status, f.message, results, runner, **emit_sandbox)
    except codec.WireError as exc:  # the judge's own codec on both ends: a candidate tampered with it
        return _final(Status.REJECTED, f"the candidate process broke the judge's protocol: {exc}", results, runner,
                      **emit_sandbox)
    except CandidateDied as exc:
        done = f" after {len(results)} passing case(s)" if results else ""
        return _final(Status.RUNTIME_ERROR, f"the candidate process died ({exc}){done}", results, runner, **emit_sandbox)
    finally:
        bench_memory.close()
    if spec.kernel_required and runner.produced_elements and not runner.kernels:
        # Judged over the whole evaluation, not per case: a case with nothing to compute
        # (k == 0) may rightly return zeros without a launch.
        return _final(Status.REJECTED, "launched no Triton kernel in any case", results, runner, **emit_sandbox)
    baseline = runner.baseline(next(iter(spec.signatures)))[0] if timed else None
    return _final(Status.CORRECT, f"all {len(cases)} cases correct{not_timed}", results, runner, baseline,
                  **emit_sandbox)


def _final(status, message, results, runner, baseline=None, **extra) -> dict:
    return {
        "status": status,
        "message": message,
        "cases": [dataclasses.asdict(r) for r in results],
        "kernels": sorted(set(runner.kernels)),
        "torch_ops": sorted(set(runner.torch_ops)),
        "baseline": baseline,
        "phase_s": {k: round(v, 3) for k, v in runner.phase.seconds.items()},
        "gpu_mib": held_mib(runner),
        **extra,
    }


def held_mib(runner: CaseRunner) -> dict[str, int]:
    """The most GPU memory each process's allocator held (MiB): the judge's own, measured,
    and what its candidate process said of its own. Without the CUDA contexts' own
    (about 0.6 GB each on the H200)."""
    if runner.device != "cuda" or not torch.cuda.is_initialized():
        return {}
    return {"judge": int(torch.cuda.max_memory_reserved()) >> 20, "candidate": runner.candidate.held_mib}


def serve_request(request_path: Path, started: CandidateProcess | None = None) -> None:
    request = json.loads(request_path.read_text())
    out = Path(request["result"])
    began = time.perf_counter()

    def emit(case: dict) -> None:
        with out.open("a") as f:
            f.write(json.dumps({"case": case}) + "\n")

    if request.get("task") == baselines_ahead.TASK:  # sent to a judge forked for it, never to a spare
        _keep_out_of_the_workspace(Path(request["workspace"]).parent / "judge")
        final = baseline_judge.time_baselines(request, emit)
    else:
        final = run(request, emit, started)
    final["eval_s"] = time.perf_counter() - began
    with out.open("a") as f:
        f.write(json.dumps({"final": final}) + "\n")


def main() -> None:
    die_with_parent()
    parent = os.environ.get("KGB_PARENT_PID")
    if parent and os.getppid() != int(parent):
        sys.exit(70)  # the harness died before the flag above took effect
    serve_request(Path(sys.argv[1]))


if __name__ == "__main__":
    main()
