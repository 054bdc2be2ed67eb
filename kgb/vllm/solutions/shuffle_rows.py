"""The own part of vllm::shuffle_rows's solution (see kgb/vllm/generate.py).
"""

import torch
import triton

from kgb.vllm.kernels.gather_2d import _gather_kernel

# Rows are copied as raw bits, so every dtype of one width shares one kernel.
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def shuffle_rows(input_tensor: torch.Tensor, dst2src_map: torch.Tensor, output_tensor: torch.Tensor) -> None:
    n_dst, n_cols = output_tensor.shape
    if n_dst == 0 or n_cols == 0:
        return
    bits = _BITS[input_tensor.element_size()]
    src, dst = input_tensor.view(bits), output_tensor.view(bits)
    block = min(triton.next_power_of_2(n_cols), 2048)
    rows = max(1, min(4096 // block, triton.next_power_of_2(n_dst)))
    grid = (triton.cdiv(n_dst, rows), triton.cdiv(n_cols, block))
    _gather_kernel[grid](src, dst2src_map, dst, n_dst, n_cols, BY_ROW=True, ROWS=rows, BLOCK=block)
