"""Compiling for a GPU the kernels that a CPU run launched, with no GPU present.

Triton's CPU interpreter runs kernels that its GPU compiler rejects: a module-level
Python float read inside a kernel, say, works in the interpreter and fails to compile
on every GPU. A candidate checked only on the CPU can therefore look correct and be
useless. This module closes that gap in two processes:

1. `record`: runs the chosen cases in the interpreter and notes every launch: which
   kernel, the Triton type of each argument (`*fp32`, `i32`, ...), the constexpr values
   and the launch options (num_warps, num_stages).
2. `compile`: imports the candidate again with the interpreter off, so `@triton.jit`
   makes real JIT functions, and compiles each distinct launch with Triton's own
   compiler for an NVIDIA target (sm_90, the H100/H200, by default) down to a cubin
   (or to PTX, ptxas left out, for the test suite's sweep over every solution: `assemble`).

It is a second process because the interpreter patches `triton.language` while it runs.

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
import inspect
import json
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgb.evaluate.output_tail import Tail, communicate
from kgb.evaluate.tree_removal import remove_tree

if TYPE_CHECKING:
    from kgb.operators import Spec

LAUNCH_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion")
_TRITON_TYPES = {
    "float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64",
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
    "bool": "i1", "complex64": "fp32", "float8_e4m3fn": "fp8e4nv", "float8_e5m2": "fp8e5",
}
# A step's report (its launches, or the compiler's errors) holds some hundred bytes a launch
# and 1,500 characters of each error: what lies past these bounds is not a report.
MAX_REPORT_BYTES = 4 << 20
MAX_ERROR_CHARS = 2_000


@dataclass(frozen=True)
class Launch:
    """One distinct kernel launch, enough to compile it again."""

    kernel: str  # the @triton.jit function's name in the candidate module
    signature: tuple[tuple[str, str], ...]  # (parameter, Triton type or "constexpr")
    constexprs: tuple[tuple[str, Any], ...]
    options: tuple[tuple[str, int], ...] = field(default=())


def _plain(value: Any) -> Any:
    """A constexpr value as JSON: the judge never unpickles what a candidate's process wrote."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, tuple | list):
        return {"tuple" if isinstance(value, tuple) else "list": [_plain(v) for v in value]}
    if type(value).__name__ == "constexpr" and hasattr(value, "value"):  # tl.constexpr(x): x is what compiles
        return _plain(value.value)
    if hasattr(value, "item") and type(value).__module__ == "numpy":
        return _plain(value.item())
    name = getattr(value, "name", None)
    if type(value).__name__ == "dtype" and isinstance(name, str):
        return {"tl_dtype": name}
    raise TypeError(f"a constexpr of type {type(value).__name__} cannot be recorded")


def _unplain(value: Any) -> Any:
    if isinstance(value, dict) and ("tuple" in value or "list" in value):
        items = [_unplain(v) for v in value.get("tuple", value.get("list"))]
        return tuple(items) if "tuple" in value else items
    if isinstance(value, dict) and "tl_dtype" in value:
        import triton.language as tl

        found = [d for d in vars(tl).values() if isinstance(d, tl.dtype) and d.name == value["tl_dtype"]]
        if not found:
            raise ValueError(f"unknown Triton dtype {value['tl_dtype']!r}")
        return found[0]
    return value


def launches_to_json(launches: list[Launch]) -> str:
    return json.dumps([{"kernel": la.kernel, "signature": la.signature,
                        "constexprs": [(k, _plain(v)) for k, v in la.constexprs], "options": la.options}
                       for la in launches])


def launches_from_json(text: str) -> list[Launch]:
    return launches_from_data(json.loads(text))


def launches_from_data(data: Any) -> list[Launch]:
    """The launches of `launches_to_json`'s text, parsed: KeyError, TypeError, ValueError or
    AttributeError for data of another shape."""
    if not isinstance(data, list):
        raise TypeError("not a list of launches")
    return [Launch(str(d["kernel"]), tuple((str(a), str(b)) for a, b in d["signature"]),
                   tuple((str(k), _unplain(v)) for k, v in d["constexprs"]),
                   tuple((str(k), v) for k, v in d["options"])) for d in data]


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


def _triton_type(value: Any) -> str | None:
    """The Triton type of a runtime argument, or None for a constexpr-like value."""
    import torch

    if isinstance(value, torch.Tensor):
        return "*" + _TRITON_TYPES[str(value.dtype).removeprefix("torch.")]
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -(2**31) <= value < 2**31 else ("i64" if value < 2**63 else "u64")
    if isinstance(value, float):
        return "fp32"
    return None


def _is_constexpr(param: inspect.Parameter) -> bool:
    return "constexpr" in str(param.annotation)


def launch_of(fn: Any, args: tuple, kwargs: dict) -> Launch:
    signature_of_fn = inspect.signature(fn)
    params = signature_of_fn.parameters
    # launch options (num_warps...) are not kernel parameters; others such as an autotune
    # config's ir_override do not change what is compiled here
    extra = {k: kwargs.pop(k) for k in list(kwargs) if k not in params}
    options = {k: v for k, v in extra.items() if k in LAUNCH_OPTIONS}
    bound = signature_of_fn.bind(*args, **kwargs)
    bound.apply_defaults()
    signature, constexprs = [], []
    for name, value in bound.arguments.items():
        kind = None if _is_constexpr(params[name]) else _triton_type(value)
        signature.append((name, kind or "constexpr"))
        if kind is None:
            constexprs.append((name, value))
    return Launch(fn.__name__, tuple(signature), tuple(constexprs), tuple(sorted(options.items())))


@contextlib.contextmanager
def recording() -> Iterator[list[Launch]]:
    """Notes every interpreted launch while it still runs as usual."""
    from triton.runtime.interpreter import InterpretedFunction

    launches: list[Launch] = []
    original = InterpretedFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        launch = launch_of(self.fn, args, dict(kwargs))
        if launch not in launches:
            launches.append(launch)
        return original(self, *args, grid=grid, warmup=warmup, **kwargs)

    InterpretedFunction.run = run
    try:
        yield launches
    finally:
        InterpretedFunction.run = original


def record(spec_path: Path | Spec, candidate: Path, tags: set[str], name: str = "crosscompile_candidate") -> list[Launch]:
    """Runs `candidate` (imported as module `name`) on the cases of the spec (a path, or the
    Spec loaded) with these tags in the interpreter."""
    import torch

    from kgb.evaluate.draws import draw_inputs
    from kgb.evaluate.interpreter import prepare_interpreter
    from kgb.operators import _import_file, load_spec

    assert os.environ.get("TRITON_INTERPRET") == "1", "recording needs Triton's interpreter"
    prepare_interpreter()
    spec = load_spec(spec_path) if isinstance(spec_path, str | Path) else spec_path
    module = _import_file(candidate, name)
    with recording() as launches, torch.no_grad():
        for case in spec.cases:
            if str(case.tag) in tags:
                entry = spec.entry_of(case)
                args, kwargs = entry.bind(draw_inputs(spec, case, case.seed, "cpu"))
                getattr(module, entry.name)(*args, **kwargs)
    return launches


def _jit_functions(module: Any) -> dict[str, Any]:
    """Module-level JIT functions by name, unwrapping autotune and heuristics wrappers."""
    from triton.runtime.jit import JITFunction

    found = {}
    for value in vars(module).values():
        while value is not None and not isinstance(value, JITFunction) and hasattr(value, "fn"):
            value = value.fn
        if isinstance(value, JITFunction):
            found[value.fn.__name__] = value
    return found


class _Lowered(Exception):
    """Raised where ptxas would start, in a check that stops at PTX (`compile_all`'s `assemble`)."""


@contextlib.contextmanager
def _stopping_at_ptx(stop: bool) -> Iterator[None]:
    """Triton's compile, its last stage (ptxas: PTX to a cubin) left out where `stop`. Triton's
    own hook on its stages does it; a Triton without the hook assembles as before."""
    from triton import knobs

    if not stop or not hasattr(knobs.runtime, "add_stages_inspection_hook"):
        yield
        return

    def stages_hook(*args):
        if not args:  # asked for its part of the compile's cache key
            return "kgb-through-ptx", "1"
        stages = args[1]

        def stop_here(src, metadata):
            raise _Lowered

        stages["cubin"] = stop_here

    before = knobs.runtime.add_stages_inspection_hook
    knobs.runtime.add_stages_inspection_hook = stages_hook
    try:
        yield
    finally:
        knobs.runtime.add_stages_inspection_hook = before


def compile_all(candidate: Path, launches: list[Launch], arch: int, ptx_dir: Path | None = None,
                name: str = "crosscompile_candidate", assemble: bool = True) -> list[tuple[Launch, str | None]]:
    """(launch, None) when it compiled for sm_<arch>, else (launch, the compiler's error).

    `assemble=False` stops at PTX: Triton lowers and generates code, ptxas does not run, unless
    the candidate writes PTX of its own (`inline_asm`), which only ptxas checks. ptxas took a
    third of the compile of the known-good solutions on the project's machines, and what a
    solution can get wrong that only the GPU compiler sees, Triton's own steps find."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kgb.operators import _import_file

    assert not os.environ.get("TRITON_INTERPRET"), "compiling needs the interpreter off"
    stop = not assemble and ptx_dir is None and "inline_asm" not in candidate.read_text()
    kernels = _jit_functions(_import_file(candidate, name))
    target = GPUTarget("cuda", arch, 32)
    results = []
    for number, launch in enumerate(launches):
        if launch.kernel not in kernels:
            results.append((launch, f"kernel {launch.kernel} is not a module-level @triton.jit function"))
            continue
        source = ASTSource(kernels[launch.kernel], dict(launch.signature), constexprs=dict(launch.constexprs))
        try:
            with _stopping_at_ptx(stop):
                compiled = triton.compile(source, target=target, options=dict(launch.options))
        except _Lowered:
            compiled = None
        except Exception as exc:  # noqa: BLE001 - the compiler's message is the finding
            results.append((launch, f"{type(exc).__name__}: {str(exc).strip()[-1500:]}"))
            continue
        if ptx_dir is not None and compiled is not None:
            (ptx_dir / f"{number:02d}-{launch.kernel}.ptx").write_text(compiled.asm["ptx"])
        results.append((launch, None))
    return results


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
    from kgb.evaluate.crosscompile import _batch_step, check, compile_all, record
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
