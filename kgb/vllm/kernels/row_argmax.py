"""The selection step of the MoE routers' top-k (topk_softmax, grouped_topk): a row's max
and the lowest column holding it, as vLLM breaks ties."""

import triton
import triton.language as tl


@triton.jit
def _row_argmax(x, cols, WIDTH: tl.constexpr):
    """x [rows, WIDTH] and its column numbers cols [WIDTH]: each row's max and its first column."""
    best = tl.max(x, axis=1)
    return best, tl.min(tl.where(x == best[:, None], cols[None, :], WIDTH), axis=1)
