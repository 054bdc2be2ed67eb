"""Triton's GPU compiler run on recorded kernel launches, with no GPU present.

The candidate is imported with the interpreter off, so `@triton.jit` makes real JIT
functions, and each distinct launch that kgb.evaluate.kernel_launches recorded is compiled
with Triton's own compiler for an NVIDIA target (sm_90, the H100/H200, by default) down to a
cubin, or to PTX with ptxas left out (`compile_all`'s `assemble`, for the test suite's sweep
over every solution). Each launch's PTX may also be written to a folder, to see what the GPU
will run without a GPU. kgb.evaluate.crosscompile runs this in a process of its own.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kgb.evaluate.kernel_launches import Launch


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
