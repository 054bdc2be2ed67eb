"""linear of the matmul family: input @ weight.T + bias, the input's leading dims seen as
the rows of one GEMM."""

import torch

from kgb.aten_families.kernels.matmul import _gemm
from kgb.aten_families.kernels.merge import _merge


def linear(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    N, K = weight.shape
    lead = list(input.shape[:-1])
    out = torch.empty((*lead, N), dtype=input.dtype, device=input.device)
    if out.numel() == 0:
        return out
    rows = _merge(input.shape[:-1], input.stride()[:-1])
    x = input
    if rows is None:  # leading dims that cannot be viewed as one: copy
        x = input.reshape(-1, K)
        rows = (x.shape[0], x.stride(0))
    M, sam = rows
    a = x.as_strided((1, M, K), (0, sam, x.stride(-1)))
    _gemm(a, weight.t(), out.view(1, M, N), 1, 0, 0, bias=bias)
    return out
