"""The own part of vllm::permute_cols's solution (see kgb/vllm/generate.py).
"""

import torch
import triton

from kgb.vllm.kernels.gather_2d import _gather_kernel


def permute_cols(A: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(A)
    K = A.shape[-1]
    n_rows = A.numel() // K if K else 0
    if n_rows == 0:
        return out
    block_k = min(triton.next_power_of_2(K), 1024)
    rows = max(1, min(8, triton.next_power_of_2(n_rows)))
    grid = (triton.cdiv(n_rows, rows), triton.cdiv(K, block_k))
    _gather_kernel[grid](A, perm, out, n_rows, K, BY_ROW=False, ROWS=rows, BLOCK=block_k)
    return out
