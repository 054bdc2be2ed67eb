"""How long a candidate process's first Triton compiles take, forked from an engine that did
or did not warm Triton's compiler (`kgb.evaluate.engine_process.warm_compiler`); prints a table.

    python benchmarks/first_compile.py [--arch 90] [--rounds 5]

No GPU is needed: the kernels are compiled for an NVIDIA target (sm_<arch>) down to a cubin,
as the candidate process compiles them at their first launch. Each round forks one child per
engine kind; the child compiles three small kernels one after another, each into an empty
Triton cache, and reports each compile's wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

KERNELS = '''
import triton
import triton.language as tl


@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out + i, tl.load(x + i, mask=m) + tl.load(y + i, mask=m), mask=m)


@triton.jit
def scale(x, out, n, s, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(out + i, tl.load(x + i, mask=m) * s, mask=m)


@triton.jit
def row_sum(x, out, n, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        i = start + tl.arange(0, BLOCK)
        acc += tl.load(x + r * n + i, mask=i < n, other=0.0)
    tl.store(out + r, tl.sum(acc))
'''
SIGNATURES = {
    "add": ({"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 1024}),
    "scale": ({"x": "*bf16", "out": "*bf16", "n": "i32", "s": "fp32", "BLOCK": "constexpr"}, {"BLOCK": 512}),
    "row_sum": ({"x": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"}, {"BLOCK": 256}),
}


def _compile_all(module, arch: int) -> list[float]:
    """In the forked child: each kernel's compile, in seconds, each into a cache of its own."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    seconds = []
    for name, (signature, constexprs) in SIGNATURES.items():
        with tempfile.TemporaryDirectory() as cache:
            os.environ["TRITON_CACHE_DIR"] = cache
            started = time.perf_counter()
            triton.compile(ASTSource(getattr(module, name), signature, constexprs=constexprs),
                           target=GPUTarget("cuda", arch, 32), options={})
            seconds.append(time.perf_counter() - started)
    return seconds


def _in_child(body) -> str:
    """What `body()` returns, run in a forked child of this process."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            os.write(write, body().encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    os.waitpid(pid, 0)
    return text


def _engine(warm: bool, arch: int, rounds: int) -> list[list[float]]:
    """An engine of this kind in a fresh process (a child of ours, which has imported
    nothing of Triton): each round's three compiles in a child forked from it."""

    def engine() -> str:
        import importlib.util

        import torch  # noqa: F401 - as the engine has
        import triton  # noqa: F401

        def compiles() -> str:
            return " ".join(f"{s:.6f}" for s in _compile_all(module, arch))

        with tempfile.TemporaryDirectory() as folder:  # Triton reads a kernel's source from its file
            path = Path(folder) / "kernels.py"
            path.write_text(KERNELS)
            spec = importlib.util.spec_from_file_location("kernels", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            if warm:
                from kgb.evaluate.engine_process import warm_compiler

                warm_compiler()
            return "\n".join(_in_child(compiles) for _ in range(rounds))

    return [[float(s) for s in line.split()] for line in _in_child(engine).splitlines()]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", type=int, default=90)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    os.environ.pop("TRITON_INTERPRET", None)
    print(f"first compiles of a forked child, sm_{args.arch}, median of {args.rounds} rounds (seconds)\n")
    print("| engine | 1st compile | 2nd | 3rd |")
    print("|---|---|---|---|")
    for warm in (False, True):
        rounds = _engine(warm, args.arch, args.rounds)
        medians = [statistics.median(r[i] for r in rounds) for i in range(len(SIGNATURES))]
        label = "warm_compiler() before the fork" if warm else "torch and Triton imported"
        print(f"| {label} | " + " | ".join(f"{m:.3f}" for m in medians) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
