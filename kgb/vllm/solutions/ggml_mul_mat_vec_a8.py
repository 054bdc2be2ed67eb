"""The own part of vllm::ggml_mul_mat_vec_a8's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.ggml_q8_1 import _dot_vec, _ggml_output


@triton.jit
def _mul_mat_vec_kernel(
    x_ptr, w_ptr, y_ptr, rows, col, row_bytes, TYPE: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # program (z, n-block): activation row z against BLOCK_N weight rows
    z = tl.program_id(0)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    n_ok = rn < rows
    acc = _dot_vec(x_ptr, w_ptr, z, rn.to(tl.int64) * row_bytes, col, n_ok, TYPE, BLOCK_N)
    tl.store(y_ptr + z.to(tl.int64) * rows + rn, acc.to(y_ptr.dtype.element_ty), mask=n_ok)


def ggml_mul_mat_vec_a8(W: torch.Tensor, X: torch.Tensor, type: int, row: int) -> torch.Tensor:
    vecs, col = X.shape
    y, row_bytes = _ggml_output(X, type, vecs, row)
    if y.numel() == 0:
        return y
    block_n = 64
    grid = (vecs, triton.cdiv(row, block_n))
    _mul_mat_vec_kernel[grid](X, W, y, row, col, row_bytes, TYPE=type, BLOCK_N=block_n)
    return y
