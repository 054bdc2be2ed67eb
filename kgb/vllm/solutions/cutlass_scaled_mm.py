"""The own part of vllm::cutlass_scaled_mm's solution (see kgb/vllm/generate.py).
"""

import torch

from kgb.vllm.kernels.scaled_mm import _scaled_mm


def cutlass_scaled_mm(
    out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, a_scales: torch.Tensor, b_scales: torch.Tensor,
    bias: torch.Tensor | None = None,
) -> None:
    _scaled_mm(out, a, b, a_scales, b_scales, bias)
