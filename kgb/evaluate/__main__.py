"""Judge one kernel file against one operator, outside any sweep.

    python -m kgb.evaluate aten::softmax                 # the operator's own solution.py
    python -m kgb.evaluate aten::softmax my_softmax.py --cases smoke,check
    python -m kgb.evaluate aten::softmax my_softmax.py --compile-for 90   # CPU: also build for sm_90
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kgb import chips, operators
from kgb.evaluate import EvalSettings, evaluate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kgb.evaluate", description=__doc__.split("\n")[0])
    parser.add_argument("op", help="operator id, e.g. aten::softmax")
    parser.add_argument("file", nargs="?", help="candidate source (default: the operator's solution.py)")
    parser.add_argument("--cases", default=None, help="comma-separated tags: smoke,check,bench (default: smoke on cpu, all on a GPU)")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--compile-for", type=int, default=None, metavar="SM",
                        help="on the CPU, also compile the kernels for this NVIDIA compute capability (90: H100/H200)")
    args = parser.parse_args(argv)
    if unknown := operators.unknown_operator(args.op):
        return refuse(unknown)
    if args.file and not Path(args.file).is_file():
        return refuse(f"no such candidate file: {args.file}")
    known = [t.value for t in operators.CaseTag]
    if args.cases and (unknown_tags := [t for t in args.cases.split(",") if t not in known]):
        # a misspelt tag selected no case, and "all 0 cases correct" passed
        return refuse(f"--cases {args.cases}: no case tag {', '.join(map(repr, unknown_tags))}; the tags are {', '.join(known)}")
    spec = operators.load(args.op)
    path = Path(args.file) if args.file else spec.solution_path
    device = chips.local_device()
    tags = tuple(args.cases.split(",")) if args.cases else (("smoke",) if device == "cpu" else ("smoke", "check", "bench"))
    verdict = evaluate(path.read_text(), spec, EvalSettings(
        device=device, case_tags=tags, time_cases=("bench",), timeout_s=args.timeout,
        compile_for=args.compile_for))
    for case in verdict.cases:
        timing = f"  {case.latency_us:.1f} us vs {case.baseline_us:.1f} us" if case.latency_us else ""
        print(f"  {case.status:<12} {case.name}{timing}")
    # a correct verdict on the CPU with compile_for passed the compile check (evaluate's
    # _cross_compiled turns a failed one into compile_error); say so, or it reads as a run without it
    compiled = f"; compiled for sm_{args.compile_for}" if verdict.correct and verdict.device == "cpu" and args.compile_for else ""
    print(f"{args.op}: {verdict.status}: {verdict.message}{compiled}")
    if not verdict.correct and verdict.logs.strip():
        print(verdict.logs[-3000:], file=sys.stderr)
    return 0 if verdict.correct else 1


def refuse(message: str | None) -> int:
    """A bad argument in one line on stderr (run.py's form), and exit status 1."""
    print(f"error: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
