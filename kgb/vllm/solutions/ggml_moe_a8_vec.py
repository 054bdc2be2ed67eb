"""The own part of vllm::ggml_moe_a8_vec's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.ggml_q8_1 import _dot_vec, _ggml_output


@triton.jit
def _moe_vec_kernel(
    x_ptr, w_ptr, topk_ptr, y_ptr, rows, col, row_bytes, top_k,
    TYPE: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # program (z, n-block): one (token, expert) pair against BLOCK_N rows of its expert
    z = tl.program_id(0)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = rn < rows
    expert = tl.load(topk_ptr + z).to(tl.int64)
    w_row = expert * rows * row_bytes + rn.to(tl.int64) * row_bytes
    acc = _dot_vec(x_ptr, w_ptr, z // top_k, w_row, col, n_ok, TYPE, BLOCK_N)
    tl.store(y_ptr + z.to(tl.int64) * rows + rn, acc.to(y_ptr.dtype.element_ty), mask=n_ok)


def ggml_moe_a8_vec(
    X: torch.Tensor, W: torch.Tensor, topk_ids: torch.Tensor, top_k: int, type: int, row: int, tokens: int
) -> torch.Tensor:
    y, row_bytes = _ggml_output(X, type, tokens * top_k, row)
    if y.numel() == 0:
        return y
    block_n = 64
    grid = (tokens * top_k, triton.cdiv(row, block_n))
    _moe_vec_kernel[grid](X, W, topk_ids, y, row, X.shape[1], row_bytes, top_k, TYPE=type, BLOCK_N=block_n)
    return y
