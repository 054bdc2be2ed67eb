"""matmul of the matmul family: vectors made matrices, batch dims broadcast, then the
batched GEMM (or one GEMM with the batch folded into the rows)."""

import math

import torch

from kgb.aten_families.kernels.matmul import _gemm
from kgb.aten_families.kernels.merge import _merge


def _batch_view(t, batch_shape):
    """t expanded to batch_shape + its matrix dims, with the batch dims merged into one
    stride (copying t only when they cannot be): (tensor, stride)."""
    t = t.expand(*batch_shape, *t.shape[-2:])
    merged = _merge(t.shape[:-2], t.stride()[:-2])
    if merged is None:
        t = t.reshape(-1, *t.shape[-2:])
        return t, t.stride(0)
    return t, merged[1]


def matmul(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    a = self.unsqueeze(0) if self.ndim == 1 else self
    b = other.unsqueeze(-1) if other.ndim == 1 else other
    M, K, N = a.shape[-2], a.shape[-1], b.shape[-1]
    # broadcast the batch dims
    sa, sb = list(a.shape[:-2]), list(b.shape[:-2])
    nb = max(len(sa), len(sb))
    sa, sb = [1] * (nb - len(sa)) + sa, [1] * (nb - len(sb)) + sb
    batch_shape = [max(x, y) if min(x, y) != 0 else 0 for x, y in zip(sa, sb, strict=False)]
    batch = math.prod(batch_shape)
    out = torch.empty((batch, M, N), dtype=self.dtype, device=self.device)
    shape = list(batch_shape)
    if self.ndim > 1:
        shape.append(M)
    if other.ndim > 1:
        shape.append(N)
    if out.numel() == 0:
        return out.view(shape)
    folded = _merge(a.shape[:-1], a.stride()[:-1]) if b.ndim == 2 and a.ndim > 2 else None
    if folded is not None:
        # (..., M, K) @ (K, N): one GEMM with the batch folded into the rows
        rows, srow = folded
        a2 = a.as_strided((1, rows, K), (0, srow, a.stride(-1)))
        _gemm(a2, b, out.view(1, rows, N), 1, 0, 0)
    else:
        a3, sab = _batch_view(a, batch_shape)
        b3, sbb = _batch_view(b, batch_shape)
        _gemm(a3, b3, out, batch, sab, sbb)
    return out.view(shape)
