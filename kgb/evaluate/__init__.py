"""Judging one candidate: static check, then a sandboxed worker process.

The candidate is source text; it is never imported into this process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kgb.evaluate.static import static_check
from kgb.evaluate.verdict import JUDGE_VERSION, CaseResult, EvalSettings, Status, Verdict
from kgb.operators import REPO_ROOT, Spec

__all__ = ["evaluate", "JUDGE_VERSION", "EvalSettings", "Status", "Verdict", "CaseResult"]

# Names of environment variables a candidate must never see (API keys and the like).
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH", re.IGNORECASE)
LOG_TAIL_CHARS = 20_000


def worker_env(settings: EvalSettings, workdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}
    env["TRITON_CACHE_DIR"] = str(workdir / "triton-cache")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if settings.device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    else:
        env.pop("TRITON_INTERPRET", None)
    env.update(settings.extra_env)
    return env


def evaluate(source: str, spec: Spec, settings: EvalSettings) -> Verdict:
    """Judge candidate `source` against `spec`. Never raises for a faulty candidate."""
    started = time.perf_counter()
    reasons = static_check(source, tuple(spec.signatures), spec.kernel_required)
    if reasons:
        return Verdict(Status.REJECTED, "; ".join(reasons), device=settings.device)
    with tempfile.TemporaryDirectory(prefix="kgb-eval-") as tmp:
        workdir = Path(tmp)
        (workdir / "candidate.py").write_text(source)
        result = workdir / "result.jsonl"
        request = {
            "spec": str(spec.path),
            "candidate": str(workdir / "candidate.py"),
            "device": settings.device,
            "case_tags": list(settings.case_tags),
            "time_tags": list(settings.time_cases),
            "repeats": settings.repeats,
            "warmup": settings.warmup,
            "result": str(result),
        }
        (workdir / "request.json").write_text(json.dumps(request))
        status, logs = _run_worker(workdir, settings)
        verdict = _read_result(result, status, logs, settings)
        if verdict.correct and settings.device == "cpu" and settings.compile_for:
            verdict = _cross_compiled(verdict, spec, workdir / "candidate.py", settings)
    elapsed = time.perf_counter() - started
    return Verdict(**{**verdict.__dict__, "eval_s": elapsed})


def _cross_compiled(verdict: Verdict, spec: Spec, candidate: Path, settings: EvalSettings) -> Verdict:
    """The interpreter's verdict, or a compile error if a GPU could not build the kernels."""
    from kgb.evaluate.crosscompile import check

    arch = settings.compile_for
    try:
        results = check(spec.path, candidate, settings.case_tags, arch, settings.timeout_s)
    except subprocess.SubprocessError as exc:  # the record step re-runs the candidate; it may hang or die
        tail = (getattr(exc, "stderr", "") or "").strip()[-2000:]
        return Verdict(Status.COMPILE_ERROR, f"compiling for sm_{arch} could not be checked: {exc}",
                       verdict.cases, verdict.logs + tail, device=settings.device)
    failed = [(launch, error) for launch, error in results if error]
    if not failed:
        return verdict
    launch, error = failed[0]
    return Verdict(Status.COMPILE_ERROR,
                   f"correct in the CPU interpreter, but kernel {launch.kernel} does not compile for sm_{arch} "
                   f"({len(failed)} of {len(results)} launches fail): {error}",
                   verdict.cases, verdict.logs, device=settings.device, kernels=verdict.kernels)


def _run_worker(workdir: Path, settings: EvalSettings) -> tuple[str, str]:
    """Run the worker; return ("ok" | "timeout" | "died:<reason>", captured stderr)."""
    stderr_path = workdir / "stderr.log"
    with stderr_path.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-m", "kgb.evaluate.worker", str(workdir / "request.json")],
            cwd=workdir,
            env=worker_env(settings, workdir),
            stdin=subprocess.DEVNULL,
            stdout=stderr,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a kill takes its children too
        )
        try:
            code = proc.wait(timeout=settings.timeout_s)
            outcome = "ok" if code == 0 else f"died:{_describe_exit(code)}"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            outcome = "timeout"
    logs = stderr_path.read_text(errors="replace")[-LOG_TAIL_CHARS:]
    return outcome, logs


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _read_result(path: Path, outcome: str, logs: str, settings: EvalSettings) -> Verdict:
    cases: list[CaseResult] = []
    final = None
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line from a worker that died mid-write
            if "case" in record:
                cases.append(CaseResult(**{**record["case"], "status": Status(record["case"]["status"])}))
            if "final" in record:
                final = record["final"]
    if final is not None:
        return Verdict(
            status=Status(final["status"]),
            message=final["message"],
            cases=tuple(CaseResult(**{**c, "status": Status(c["status"])}) for c in final.get("cases", [])),
            logs=logs,
            baseline=final.get("baseline"),
            device=settings.device,
            kernels=tuple(final.get("kernels", ())),
            torch_ops=tuple(final.get("torch_ops", ())),
        )
    done = f" after {len(cases)} passing case(s)" if cases else ""
    if outcome == "timeout":
        return Verdict(Status.TIMEOUT, f"the evaluation ran past {settings.timeout_s:g} s and was killed{done}", tuple(cases), logs, device=settings.device)
    last = logs.strip().splitlines()[-1] if logs.strip() else "no output"
    reason = outcome.removeprefix("died:")
    return Verdict(Status.RUNTIME_ERROR, f"the worker process died ({reason}){done}: {last}", tuple(cases), logs, device=settings.device)
