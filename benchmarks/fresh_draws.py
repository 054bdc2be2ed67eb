"""How often an operator's known-good solution fails its own comparison on fresh draws; prints
a table. The judge checks every timed case once more on a draw from a secret seed, so a
solution that fails one draw in fifty fails one evaluation in fifty, whatever the candidate:
on the H200 (session 41) `vllm::paged_attention_v2` failed `qwen2-7b-8k-bf16` once, one element
of its output off, and passed the next time (the spec's tolerance, mended in its v4, session 42).
`all` draws every operator's known-good solution: docs/results/fresh-draws-cpu.md.

    python benchmarks/fresh_draws.py OP|all [--case NAME | --tag TAG] [--draws N] [--solution FILE] [--device D]

Each draw is as the judge's: the spec's `make_inputs` from a secret seed on the device, the
solution called on a copy with its pure outputs poisoned, the reference on another copy, and
the spec's comparison (its own `compare`, or the published tolerance). The solution runs in
this process, not sandboxed: it is the project's own code, or a FILE of your own. Without a
GPU the kernels run in Triton's interpreter, and only the smoke cases are drawn unless `--case` or
`--tag` says otherwise (as the judge runs only those there).
A failing draw's seed is printed, so it can be drawn again.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgb import operators  # noqa: E402
from kgb.evaluate.case_runner import CaseRunner  # noqa: E402
from kgb.evaluate.correctness import clone_exact  # noqa: E402
from kgb.evaluate.draws import candidate_copy, draw_inputs  # noqa: E402
from kgb.evaluate.interpreter import prepare_interpreter  # noqa: E402


def solution_module(spec: operators.Spec, file: Path | None) -> Any:
    if file is None:
        return spec.solution_module()
    found = importlib.util.spec_from_file_location(f"fresh_draws_{file.stem}", file)
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    return module


def judged(runner: CaseRunner, case: operators.Case, solution: Any, seed: int) -> str | None:
    """The comparison's message for one draw from `seed`, None where the solution passes: the
    judge's own reference call and comparison (kgb.evaluate.case_runner)."""
    spec = runner.spec
    inputs = draw_inputs(spec, case, seed, runner.device)
    entry = spec.entry_of(case)
    theirs, ours = candidate_copy(spec, inputs), clone_exact(inputs)
    args, kwargs = entry.bind(theirs)
    actual = getattr(solution, entry.name)(*args, **kwargs)
    expected = runner.reference(entry.name, ours, case)
    return runner._compare(case, expected, actual, ours, theirs)[0]


def draw_cases(spec: operators.Spec, args: argparse.Namespace) -> list[tuple[operators.Case, int]]:
    """(case, failed draws) for each case of `spec` the arguments select, the failing seeds printed."""
    tag = args.tag or (None if args.case or args.device != "cpu" else operators.CaseTag.SMOKE.value)
    cases = [c for c in spec.cases if args.case in (None, c.name) and tag in (None, c.tag)]
    if not cases:
        raise SystemExit(f"{spec.id} has no case {args.case!r}: {', '.join(c.name for c in spec.cases)}")
    solution = solution_module(spec, args.solution)
    runner = CaseRunner(spec, None, args.device)  # its checks only: no candidate process
    secret = random.SystemRandom()
    counts = []
    for case in cases:
        began, failures = time.perf_counter(), []
        for _ in range(args.draws):
            seed = secret.randrange(1 << 62)
            message = judged(runner, case, solution, seed)
            if message:
                failures.append((seed, message))
        print(f"| {spec.id} | {case.name} | {args.draws} | {len(failures)} | {time.perf_counter() - began:.1f} |",
              flush=True)
        for seed, message in failures:
            print(f"    seed {seed}: {message[:300]}")
        counts.append((case, len(failures)))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("op", help="an operator id, or `all` for every operator's known-good solution")
    parser.add_argument("--case", help="one case by name (default: every case of the operator the judge runs here)")
    parser.add_argument("--tag", choices=[t.value for t in operators.CaseTag],
                        help="the cases of one tag (default: smoke on the CPU, every case on a GPU)")
    parser.add_argument("--draws", type=int, default=20, help="fresh draws per case")
    parser.add_argument("--solution", type=Path, help="a kernel file to judge instead of the solution")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args(argv)
    if args.op == "all" and (args.case or args.solution):
        parser.error("--case and --solution name one operator's")
    ops = sorted(operators.discover()) if args.op == "all" else [args.op]
    if args.device == "cpu":  # Triton's interpreter as the candidate process has it (bf16 arithmetic and casts)
        prepare_interpreter()
    began = time.perf_counter()
    print("| operator | case | draws | failed | seconds |\n|---|---|---|---|---|")
    counts = [c for op in ops for c in draw_cases(operators.load(op), args)]
    failing = sum(1 for _, failed in counts if failed)
    print(f"\n{len(counts)} cases of {len(ops)} operator(s), {args.draws} draws each on {args.device}: "
          f"{failing} case(s) failed a draw, {time.perf_counter() - began:.0f} s")
    return 1 if failing else 0


if __name__ == "__main__":
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")  # before the solution's kernels are decorated
    sys.exit(main())
