"""What each step of a bench case's comparison costs the first time a judge meets it, and after;
prints a table.

    python benchmarks/compare_steps.py [--device cuda|cpu] [--warm] OPERATOR...

For every bench case of each operator, in a process of its own (a fresh Triton state, as a
judge has), each step of the judge's check of a timed case timed alone: the draw, the reference
(a first call and a second), the tolerance's scale (`correctness.tolerance_for`), the comparison
(`correctness.compare_tensor`, a first call and a second) and the audit's digest
(`call_audit.digest`), and the whole check as the judge runs it (`correctness.compare_outputs`:
the spec's own compare where it has one, as ggml_moe_a8's; a first call and a second). The
check cases' references run first, as a judge's check phase runs them. With --warm the process
first warms the comparison kernels as a spare does (`comparison_kernels.warm_up`). Session 67
(an H100, without it): the batched GEMMs' first scale, comparison and digest of an output whose
length 16 does not divide took 0.19, 0.60 and 0.25 s, and then 1 ms, where their references
took 1-40 ms.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

STEPS = ("draw", "reference", "reference again", "scale", "compare", "compare again", "digest", "judged",
         "judged again")


def measure(op: str, device: str, warm: bool) -> list[tuple[str, int, dict[str, float]]]:
    """(case, output elements, seconds by step) for each bench case of `op`, in this process."""
    import torch

    from kgb.evaluate import comparison_kernels
    from kgb.evaluate.call_audit import digest
    from kgb.evaluate.correctness import (
        clone_exact,
        compare_outputs,
        compare_tensor,
        leaves,
        tolerance_for,
    )
    from kgb.evaluate.draws import draw_inputs
    from kgb.operators import load

    def timed(call, *args):
        if device == "cuda":
            torch.cuda.synchronize()
        began = time.perf_counter()
        result = call(*args)
        if device == "cuda":
            torch.cuda.synchronize()
        return result, time.perf_counter() - began

    spec = load(op)
    if warm:
        comparison_kernels.warm_up(device)

    def called(case, inputs):
        entry = spec.entry_of(case)
        args, kwargs = entry.bind(inputs)
        with torch.no_grad():
            return spec.reference_for(entry.name)(*args, **kwargs)

    for case in spec.cases_for({"check"}):
        called(case, draw_inputs(spec, case, 1, device))
    rows = []
    for case in spec.cases_for({"bench"}):
        inputs, drawn = timed(draw_inputs, spec, case, 2, device)
        first, second = clone_exact(inputs), clone_exact(inputs)
        result, ref = timed(called, case, first)
        result_again, ref_again = timed(called, case, second)
        # the first output: a written argument's, else the first tensor the call returned
        if spec.written_args:
            out, out_again = first[spec.written_args[0]], second[spec.written_args[0]]
        else:
            out, out_again = (next(t for t in leaves(r) if isinstance(t, torch.Tensor)) for r in (result, result_again))
        _, scale = timed(tolerance_for, out, case.reduction)
        _, compare = timed(compare_tensor, "output", out, out_again, case.reduction)
        _, compare_again = timed(compare_tensor, "output", out, out_again, case.reduction)
        _, digested = timed(digest, [out])
        # the whole check as the judge runs it: the spec's own compare where it has one
        expected = {"return": result, **{name: first[name] for name in spec.written_args}}
        actual = {"return": result_again, **{name: second[name] for name in spec.written_args}}
        _, judged = timed(compare_outputs, spec, case, actual, expected, second)
        _, judged_again = timed(compare_outputs, spec, case, actual, expected, second)
        seconds = (drawn, ref, ref_again, scale, compare, compare_again, digested, judged, judged_again)
        rows.append((case.name, out.numel(), dict(zip(STEPS, seconds, strict=True))))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ops", nargs="*", help="operators, e.g. cublas::cublasSgemmStridedBatched")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--warm", action="store_true", help="warm the comparison kernels first, as a spare does")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child: one operator, rows on stdout
    args = parser.parse_args()
    if args.one:
        for case, elements, seconds in measure(args.one, args.device, args.warm):
            print("\t".join([case, str(elements), *(f"{seconds[s]:.4f}" for s in STEPS)]))
        return 0
    if not args.ops:
        parser.error("name at least one operator")
    print(f"each step of a bench case's check, alone, on {args.device}"
          f"{', the comparison kernels warmed first' if args.warm else ''} (seconds)\n")
    print("| operator | case | elements | " + " | ".join(STEPS) + " |")
    print("|---|---|---|" + "---|" * len(STEPS))
    from kgb.operators import unknown_operator

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    failed = 0
    for op in args.ops:
        if why := unknown_operator(op):
            failed += 1
            print(f"| {op} | {why} |")
            continue
        child = [sys.executable, __file__, "--one", op, "--device", args.device, *(["--warm"] if args.warm else [])]
        done = subprocess.run(child, capture_output=True, text=True, env=env, cwd=REPO)
        if done.returncode != 0:
            failed += 1
            print(f"| {op} | failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode} |")
            continue
        for line in done.stdout.splitlines():
            case, elements, *seconds = line.split("\t")
            print(f"| {op} | {case} | {int(elements):,} | " + " | ".join(seconds) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
