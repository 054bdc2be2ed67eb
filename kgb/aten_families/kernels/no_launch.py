"""The kernel of a solution that launches none: a view moves no data, but the evaluator's
static check wants a Triton kernel in every solution (the view operators)."""

import triton
import triton.language as tl


@triton.jit
def _unused(ptr):
    # The evaluator's static check wants a Triton kernel in every solution; a view moves
    # no data, so this one is never launched.
    tl.store(ptr, tl.load(ptr))
