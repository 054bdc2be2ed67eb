"""Limit the p-norm of sub-tensors: `aten::renorm`.

`renorm(self, p, dim, maxnorm)`: for each index i along `dim` (negative values count from
the end), the sub-tensor self.select(dim, i) is one slice. Its p-norm over all of its
elements, norm_i = (sum |x|^p)^(1/p) (max |x| when p is inf), is computed in float32; then
  factor_i = maxnorm / (norm_i + 1e-7) if norm_i > maxnorm else 1.0
and out = self * factor_i on slice i. As in PyTorch, factor_i is rounded to the dtype of
`self` first and the product is rounded once to that dtype.

- `self` is float16, bfloat16 or float32 with at least 2 dimensions and any strides.
  `p` is a Python number > 0 or float('inf'); `maxnorm` is a Python number >= 0.
- Slices whose norm does not exceed `maxnorm` are copied unchanged. Empty tensors give
  empty results.
- The result is a new tensor of the shape and dtype of `self`; `self` must not be
  modified.
- Required: the default overload. Left out: `renorm.out` and the in-place `renorm_`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def renorm(self: torch.Tensor, p: float, dim: int, maxnorm: float) -> torch.Tensor:
    """aten::renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor"""
'''


def _case(name, tag, shape, dtype, p, dim, maxnorm, transpose=False, seed=0):
    params = dict(shape=shape, dtype=dtype, p=p, dim=dim, maxnorm=maxnorm, transpose=transpose)
    n = 1
    for d, s in enumerate(shape):
        n *= s if d != dim % len(shape) else 1
    # each output depends on its slice's norm: a reduction over the slice (capped so that
    # atol, 1e-4 x reduction x RMS, stays below the output's RMS)
    return Case(name, tag, params, seed=seed, reduction=max(1, min(n, 1024)))


CASES = [
    _case("smoke-rows-f32", "smoke", (5, 7), "float32", 2.0, 0, 2.5),
    _case("smoke-middle-f16-p1", "smoke", (4, 6, 3), "float16", 1.0, 1, 9.0, seed=1),
    _case("embedding-f32", "check", (1000, 64), "float32", 2.0, 0, 8.0),
    _case("cols-inf-bf16", "check", (64, 300), "bfloat16", float("inf"), 1, 2.5),
    _case("conv-weight-f32", "check", (16, 8, 3, 3), "float32", 2.0, 0, 8.0),
    _case("p3-f32", "check", (200, 50), "float32", 3.0, 0, 4.0),
    _case("p-half-f16", "check", (40, 30), "float16", 0.5, 1, 1000.0),
    _case("rows-f16", "check", (50, 128), "float16", 2.0, -2, 11.0),
    _case("last-dim-bf16", "check", (6, 7, 40), "bfloat16", 2.0, -1, 6.0),
    _case("transposed", "check", (300, 129), "float32", 2.0, 0, 11.0, transpose=True),
    _case("few-slices", "check", (3, 30000), "float32", 1.5, 0, 900.0),
    _case("empty", "check", (0, 16), "float32", 2.0, 0, 1.0),
    _case("bench-embedding-bf16", "bench", (32000, 4096), "bfloat16", 2.0, 0, 60.0),
    _case("bench-embedding-f32", "bench", (50257, 768), "float32", 2.0, 0, 25.0),
    _case("bench-cols-f16", "bench", (4096, 4096), "float16", 2.0, 1, 60.0),
]


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    shape = tuple(reversed(p["shape"])) if p["transpose"] else tuple(p["shape"])
    x = torch.randn(shape, generator=gen)
    view = x.t() if p["transpose"] else x
    # slices of unequal scale (0.3 to 1.7), so that some norms exceed maxnorm and some not
    dim = p["dim"] % view.ndim
    scale_shape = [n if d == dim else 1 for d, n in enumerate(view.shape)]
    view.mul_(0.3 + 1.4 * torch.rand(scale_shape, generator=gen))
    x = x.to(dtype).to(device)
    if p["transpose"]:
        x = x.t()
    return dict(self=x, p=p["p"], dim=p["dim"], maxnorm=p["maxnorm"])


def reference(self, p, dim, maxnorm):
    return torch.ops.aten.renorm.default(self, p, dim, maxnorm)
