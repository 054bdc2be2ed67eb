"""bmm of the matmul family: the batched GEMM as it is."""

import torch

from kgb.aten_families.kernels.matmul import _gemm


def bmm(self: torch.Tensor, mat2: torch.Tensor) -> torch.Tensor:
    B, M, _ = self.shape
    out = torch.empty((B, M, mat2.shape[2]), dtype=self.dtype, device=self.device)
    _gemm(self, mat2, out, B, self.stride(0), mat2.stride(0))
    return out
