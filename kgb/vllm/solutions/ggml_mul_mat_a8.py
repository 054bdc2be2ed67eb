"""The own part of vllm::ggml_mul_mat_a8's solution (see kgb/vllm/generate.py).
"""

import torch
import triton
import triton.language as tl

from kgb.vllm.kernels.ggml_q8_1 import _dot_rows, _ggml_output


@triton.jit
def _mul_mat_a8_kernel(
    w_ptr, x_ptr, y_ptr, batch, rows, col, row_bytes,
    TYPE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    m_ok = rm < batch
    n_ok = rn < rows
    w_row = rn.to(tl.int64) * row_bytes
    acc = _dot_rows(x_ptr, w_ptr, rm.to(tl.int64), m_ok, w_row, col, n_ok, TYPE, True, BLOCK_M, BLOCK_N)
    y = y_ptr + rm.to(tl.int64)[:, None] * rows + rn[None, :]
    tl.store(y, acc.to(y_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


def ggml_mul_mat_a8(W: torch.Tensor, X: torch.Tensor, type: int, row: int) -> torch.Tensor:
    batch, col = X.shape
    y, row_bytes = _ggml_output(X, type, batch, row)
    if y.numel() == 0:
        return y
    block_m = 16 if batch <= 16 else 64
    block_n = 64
    grid = (triton.cdiv(batch, block_m), triton.cdiv(row, block_n))
    _mul_mat_a8_kernel[grid](W, X, y, batch, row, col, row_bytes, TYPE=type, BLOCK_M=block_m, BLOCK_N=block_n)
    return y
