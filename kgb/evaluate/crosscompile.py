"""Compiling for a GPU the kernels that a CPU run launched, with no GPU present.

Triton's CPU interpreter runs kernels that its GPU compiler rejects: a module-level
Python float read inside a kernel, say, works in the interpreter and fails to compile
on every GPU. A candidate checked only on the CPU can therefore look correct and be
useless. This module closes that gap in two processes:

1. `record`: runs the chosen cases in the interpreter and notes every launch
   (kgb.evaluate.kernel_launches).
2. `compile`: imports the candidate again with the interpreter off and compiles each
   distinct launch with Triton's own compiler for an NVIDIA target (sm_90, the H100/H200,
   by default) down to a cubin, or to PTX for the test suite's sweep over every solution
   (kgb.evaluate.launch_compiler).

It is a second process because the interpreter patches `triton.language` while it runs.
Both steps run candidate code, confined as the judge confines a candidate, and each
writes a report (the launches, the compiler's errors) that this module reads back as what
the candidate's code could have written there.

    python -m kgb.evaluate.crosscompile OP [--file CANDIDATE.py] [--cases smoke] [--arch 90]
                                           [--ptx DIR]

prints one line per distinct launch and exits 1 if any failed to compile; `--ptx` also
writes each launch's PTX to DIR, to see what the GPU will run (fused multiply-adds, the
division instruction) without a GPU. With
`eval.compile_for=90`, CPU evaluations run the same check on every candidate that the
interpreter found correct (kgb.evaluate).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kgb.evaluate.kernel_launches import (
    Launch,
    launches_from_data,
    launches_from_json,
    launches_to_json,
    record,
)
from kgb.evaluate.launch_compiler import compile_all
from kgb.evaluate.output_tail import Tail, communicate
from kgb.evaluate.tree_removal import remove_tree

# A step's report (its launches, or the compiler's errors) holds some hundred bytes a launch
# and 1,500 characters of each error: what lies past these bounds is not a report.
MAX_REPORT_BYTES = 4 << 20
MAX_ERROR_CHARS = 2_000


class BadReport(subprocess.SubprocessError):
    """A step's report that is not what the step writes. The candidate's code runs in the
    step, which can write its report: what it wrote there made the harness raise (text that
    is not JSON: an infrastructure failure, no verdict, retried by every run) or wait for
    ever (a FIFO in its place, which the harness opened to read), session 49's red team. The
    check then fails as the candidate's compile error (`kgb.evaluate._cross_compiled`)."""


def _report(path: Path, step: str, limit: int = MAX_REPORT_BYTES) -> Any:
    """The JSON in the report `path` of the `step` ("record", "compile"), or BadReport: it
    must be a regular file of at most `limit` bytes, opened without following a link and
    without waiting (open() of a FIFO waits for a writer, and the step's processes are dead),
    and parse within Python's recursion limit."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise BadReport(f"the {step} step's report {path.name} cannot be read ({e.strerror})") from e
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadReport(f"the {step} step's report {path.name} is not a regular file")
        chunks, size = [], 0
        while size <= limit and (chunk := os.read(fd, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise BadReport(f"the {step} step's report {path.name} cannot be read ({e.strerror})") from e
    finally:
        os.close(fd)
    if size > limit:
        raise BadReport(f"the {step} step's report {path.name} is larger than {limit} bytes")
    try:
        return json.loads(b"".join(chunks))
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise BadReport(f"the {step} step's report {path.name} is not JSON ({type(e).__name__}: {str(e)[:200]})") from e


def _launches_reported(path: Path) -> list[Launch]:
    """The record step's launches, or BadReport."""
    data = _report(path, "record")
    try:
        return launches_from_data(data)
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as e:
        raise BadReport(f"the record step's report is not a list of launches ({type(e).__name__}: {str(e)[:200]})") from e


def _errors_reported(path: Path, launches: int) -> list[str | None]:
    """The compile step's error (or None) for each of its `launches`, or BadReport."""
    errors = _report(path, "compile")
    if not (isinstance(errors, list) and len(errors) == launches
            and all(error is None or isinstance(error, str) for error in errors)):
        raise BadReport("the compile step did not report every launch")
    return [error if error is None else error[-MAX_ERROR_CHARS:] for error in errors]


@contextlib.contextmanager
def _steps_folder() -> Iterator[Path]:
    """The steps' folder, which their candidate code may write, removed after them whatever
    it left there (TemporaryDirectory's rmtree raises RecursionError for a nest of 1,500
    folders: kgb.evaluate.tree_removal)."""
    folder = Path(tempfile.mkdtemp(prefix="kgb-crosscompile-"))
    try:
        yield folder
    finally:
        remove_tree(folder)


STEP_OUTPUT_CHARS = 64_000  # of each step's stdout and of its stderr: the verdict shows the last 2,000


def _run_step(command: list[str], env: dict[str, str], timeout_s: float) -> subprocess.CompletedProcess:
    """One step, as subprocess.run(check=True, capture_output=True) would run it, in a process
    group of its own that is killed whole once it is over: a step runs candidate code, and the
    compile step may start programs (a shell among them), which would otherwise outlive the
    check (session 47's red team: a shell waiting on a FIFO, started at the candidate's
    import, was still there after the verdict). The step's seccomp filter keeps what it
    starts in the group (no setsid, no setpgid)."""
    import signal

    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    # only their tails are kept: a step runs candidate code, which may print without end
    tails = {proc.stdout: Tail(STEP_OUTPUT_CHARS), proc.stderr: Tail(STEP_OUTPUT_CHARS)}
    try:
        communicate(proc, tails, timeout_s)
    except subprocess.TimeoutExpired as exc:
        os.killpg(proc.pid, signal.SIGKILL)
        communicate(proc, tails)
        raise subprocess.TimeoutExpired(command, timeout_s, *(t.text() for t in tails.values())) from exc
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    out, err = (t.text() for t in tails.values())
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, command, out, err)
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def check(spec_path: Path, candidate: Path, tags: tuple[str, ...] = ("smoke",), arch: int = 90,
          timeout_s: float = 600, ptx_dir: Path | None = None,
          compile_python: str | None = None, env: dict[str, str] | None = None) -> list[tuple[Launch, str | None]]:
    """Both steps, each in its own process; raises if the interpreter run itself fails
    (CalledProcessError), or a step's report is not one (BadReport).

    `compile_python`: the Python (with its own Triton) that compiles, e.g. a virtualenv
    with the GPU host's Triton version: the compilers of two versions reject different
    kernels (Triton 3.6 wants `out_dtype` for a float64 `tl.dot`, 3.9 does not). `env`: the
    steps' environment (the harness passes the judge's, scrubbed of secrets), else this one's."""
    env = {k: v for k, v in (os.environ if env is None else env).items() if k != "TRITON_INTERPRET"}
    # the steps run confined, where no thread may start: no OpenMP or BLAS pools
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with _steps_folder() as tmp:
        launches = tmp / "launches.json"
        env["TRITON_CACHE_DIR"] = str(tmp / "triton-cache")
        base = ["-m", "kgb.evaluate.crosscompile", "--step"]
        args = [str(spec_path), "--file", str(candidate), "--cases", ",".join(tags), "--arch", str(arch), "--launches", str(launches)]
        if ptx_dir is not None:
            ptx_dir.mkdir(parents=True, exist_ok=True)
            args += ["--ptx", str(ptx_dir)]
        _run_step([sys.executable, *base, "record", *args], {**env, "TRITON_INTERPRET": "1"}, timeout_s)
        recorded = _launches_reported(launches)
        # Triton 3.9 warns that fusion will be off by default from 3.10; the GPU hosts run it
        # on (Triton 3.6), so compile as they do unless the caller chose otherwise.
        compile_env = {"TRITON_DEFAULT_FP_FUSION": "1", **env}
        _run_step([compile_python or sys.executable, *base, "compile", *args], compile_env, timeout_s)
        errors = _errors_reported(launches.with_suffix(".results"), len(recorded))
        return list(zip(recorded, errors, strict=True))


def check_many(pairs: list[tuple[Path, Path]], tags: tuple[str, ...] = ("smoke",), arch: int = 90,
               timeout_s: float = 3600, compile_python: str | None = None,
               assemble: bool = True) -> list[list[tuple[Launch, str | None]] | str]:
    """`check` for many (spec, candidate) pairs in two processes in all, not two per pair:
    a fresh Python that imports torch and Triton costs seconds, which over every solution
    was most of the test suite's time. Per pair: its results, or why its interpreter run
    failed. `compile_python`: see `check`; `assemble`: see `compile_all`."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    with _steps_folder() as tmp:
        batch, launches = tmp / "batch.json", tmp / "launches.json"
        batch.write_text(json.dumps([[str(spec), str(candidate)] for spec, candidate in pairs]))
        env["TRITON_CACHE_DIR"] = str(tmp / "triton-cache")
        args = ["-m", "kgb.evaluate.crosscompile", "--batch", str(batch), "--cases", ",".join(tags),
                "--arch", str(arch), "--launches", str(launches), *([] if assemble else ["--through-ptx"]), "--step"]
        _run_step([sys.executable, *args, "record"], {**env, "TRITON_INTERPRET": "1"}, timeout_s)
        recorded = _report(launches, "record", MAX_REPORT_BYTES * len(pairs))
        _run_step([compile_python or sys.executable, *args, "compile"], {"TRITON_DEFAULT_FP_FUSION": "1", **env}, timeout_s)
        errors = _report(launches.with_suffix(".results"), "compile", MAX_REPORT_BYTES * len(pairs))
    out: list[list[tuple[Launch, str | None]] | str] = []
    for found, failed in zip(recorded, errors, strict=True):
        if "error" in found:
            out.append(found["error"])
            continue
        pair = launches_from_json(found["launches"])
        out.append([(launch, None if error is None else str(error)) for launch, error in zip(pair, failed, strict=True)])
    return out


def _batch_step(step: str, pairs: list[tuple[Path, Path]], tags: set[str], arch: int, launches: Path,
                assemble: bool = True) -> None:
    """One step of `check_many`, in its confined process."""
    if step == "record":
        found = []
        for i, (spec, candidate) in enumerate(pairs):
            try:
                found.append({"launches": launches_to_json(record(spec, candidate, tags, f"crosscompile_candidate_{i}"))})
            except Exception as exc:  # noqa: BLE001 - this pair's interpreter run failed; the others go on
                found.append({"error": f"{type(exc).__name__}: {str(exc)[-1500:]}"})
        launches.write_text(json.dumps(found))
        return
    results = []
    for i, ((_, candidate), found) in enumerate(zip(pairs, json.loads(launches.read_text()), strict=True)):
        if "error" in found:
            results.append([])
            continue
        done = compile_all(candidate, launches_from_json(found["launches"]), arch, name=f"crosscompile_candidate_{i}",
                           assemble=assemble)
        results.append([error for _, error in done])
    launches.with_suffix(".results").write_text(json.dumps(results))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("op", nargs="?", help="operator id, e.g. aten::softmax, or a spec.py path")
    parser.add_argument("--file", type=Path, help="candidate file (default: the operator's solution)")
    parser.add_argument("--cases", default="smoke")
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--ptx", type=Path, help="write each launch's PTX into this folder")
    parser.add_argument("--compile-python", help="compile with this Python's Triton (e.g. the GPU host's version)")
    parser.add_argument("--step", choices=["record", "compile"], help=argparse.SUPPRESS)
    parser.add_argument("--launches", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--batch", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--through-ptx", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    # Run as `-m`, this file is __main__: take the functions from the importable module.
    from kgb.evaluate.crosscompile import _batch_step, check
    from kgb.operators import load

    if args.batch is not None:
        pairs = [(Path(s), Path(c)) for s, c in json.loads(args.batch.read_text())]
    elif args.op is None:
        parser.error("an operator id or spec path is required")
    else:
        spec_path = Path(args.op) if args.op.endswith(".py") else load(args.op).path
        pairs = [(spec_path, args.file or spec_path.parent / "solution.py")]
    spec_path, candidate = pairs[0]
    tags = tuple(args.cases.split(","))
    if args.step is not None:
        # These steps run candidate code: confine them as the judge confines a candidate. What
        # they use of kgb, and the specs, are loaded first: the candidate reads its own file
        # only, not kgb's package (the family modules' known-good kernels) nor the spec's
        # folder (solution.py).
        import importlib

        from kgb.evaluate.sandbox import Limits, confine
        from kgb.operators import import_spec_libraries
        from kgb.shown_spec import load_shown

        import_spec_libraries()
        for module in ("bounds", "draws", "integrity", "interpreter", "kernel_accesses", "provenance"):
            importlib.import_module(f"kgb.evaluate.{module}")
        if args.step == "record":  # with the cases it runs, not the hidden ones (kgb.shown_spec.load_shown)
            pairs = [(load_shown(s, set(tags)), c) for s, c in pairs]

        writable = [args.launches.parent] + ([args.ptx] if args.ptx else [])
        tempfile.tempdir = str(writable[0])
        import torch

        torch.set_num_threads(1)
        readable = sorted({str(c) for _, c in pairs})
        # Only the compile step runs a program (Triton's ptxas); the record step's interpreter
        # runs none, and a shell it could start outlived the check (session 47's red team)
        confine(writable[0], allow_exec=args.step == "compile", limits=Limits(), extra_read=tuple(readable),
                extra_write=tuple(str(w) for w in writable[1:]))
    if args.batch is not None:
        _batch_step(args.step, pairs, set(tags), args.arch, args.launches, assemble=not args.through_ptx)
        return 0
    if args.step == "record":
        args.launches.write_text(launches_to_json(record(pairs[0][0], candidate, set(tags))))
        return 0
    if args.step == "compile":
        results = compile_all(candidate, launches_from_json(args.launches.read_text()), args.arch, args.ptx)
        args.launches.with_suffix(".results").write_text(json.dumps([error for _, error in results]))
        return 0
    results = check(spec_path, candidate, tags, args.arch, ptx_dir=args.ptx, compile_python=args.compile_python)
    for launch, error in results:
        constexprs = ", ".join(f"{k}={v}" for k, v in launch.constexprs)
        print(f"{'ok    ' if error is None else 'FAILED'} {launch.kernel}[{constexprs}]" + (f"\n  {error}" if error else ""))
    failed = sum(error is not None for _, error in results)
    print(f"{len(results)} distinct launch(es) compiled for sm_{args.arch}; {failed} failed"
          + (f"; PTX in {args.ptx}" if args.ptx else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
