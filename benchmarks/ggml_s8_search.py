"""Seeds on which a ggml a8 operator's known-good solution fails its spec's check in Triton's
interpreter because s8 = float16(sum of a block of activations) rounds another way there than
in the reference: prints a table row per case and each failing seed.

    python benchmarks/ggml_s8_search.py [OP] [--case NAME] [--seeds N] [--first S]

A blind search finds them slowly (vllm::ggml_moe_a8's smoke-q4_1-f32 failed about one draw in
14000 before its spec's v4), so this one screens first: it draws each seed's inputs (cheap)
and keeps those where PyTorch's float32 block sums (the reference's) and numpy's (tl.sum in
the interpreter) round to different float16s, then judges the solution on those only, as
the judge judges a fresh draw (benchmarks/fresh_draws.py). Without `--case`, every case of
float32 activations the interpreter can run in seconds (float16 and bfloat16 blocks sum
exactly, in any order, nearly always). When the s8 bound came in (ggml_moe_a8's v4,
tests/test_ggml_ties.py): its smoke-q4_1-f32 over seeds 0-59999 screened 168 seeds in, of
which the solution failed 4 under v3 (7394, 9947, 16465, 39285) and none under v4.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fresh_draws import judged  # noqa: E402

from kgb import operators  # noqa: E402
from kgb.evaluate.case_runner import CaseRunner  # noqa: E402
from kgb.evaluate.draws import draw_inputs  # noqa: E402
from kgb.evaluate.interpreter import prepare_interpreter  # noqa: E402

OPS = ("vllm::ggml_moe_a8", "vllm::ggml_moe_a8_vec", "vllm::ggml_mul_mat_a8", "vllm::ggml_mul_mat_vec_a8")


def rounds_apart(x: torch.Tensor) -> bool:
    """Whether some block of x sums, in PyTorch's order and in numpy's, to float32s that round
    to different float16s."""
    xb = x.float().reshape(x.shape[0], -1, 32)
    ours = torch.from_numpy(np.ascontiguousarray(np.sum(xb.numpy(), axis=-1)))
    return bool((xb.sum(-1).half() != ours.half()).any())


def search(spec: operators.Spec, case: operators.Case, seeds: range) -> tuple[int, list[tuple[int, str]]]:
    """(seeds screened in, [(seed, message)] of those the solution fails)."""
    screened = [s for s in seeds if rounds_apart(draw_inputs(spec, case, s, "cpu")["X"])]
    runner, solution = CaseRunner(spec, None, "cpu"), spec.solution_module()
    failed = [(s, m) for s in screened if (m := judged(runner, case, solution, s))]
    return len(screened), failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("op", nargs="?", help="one of the ggml a8 operators (default: all four)")
    parser.add_argument("--case", help="one case by name")
    parser.add_argument("--seeds", type=int, default=20000, help="seeds to screen per case")
    parser.add_argument("--first", type=int, default=0, help="the first seed")
    args = parser.parse_args(argv)
    prepare_interpreter()
    print("| operator | case | seeds | screened in | failed | seconds |\n|---|---|---|---|---|---|")
    failing = 0
    for op in [args.op] if args.op else OPS:
        spec = operators.load(op)
        cases = [c for c in spec.cases if (c.name == args.case if args.case else
                                           c.tag == "smoke" and c.params["dtype"] == "float32")]
        for case in cases:
            began = time.perf_counter()
            screened, failed = search(spec, case, range(args.first, args.first + args.seeds))
            print(f"| {op} | {case.name} | {args.seeds} | {screened} | {len(failed)} | "
                  f"{time.perf_counter() - began:.0f} |", flush=True)
            for seed, message in failed:
                print(f"    seed {seed}: {message[:300]}")
            failing += len(failed)
    return 1 if failing else 0


if __name__ == "__main__":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before the solutions' kernels are decorated
    sys.exit(main())
