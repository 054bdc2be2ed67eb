"""Soft margin (logistic) loss: `aten::soft_margin_loss`.

`soft_margin_loss(self, target, reduction=1)` computes, elementwise,
loss = log(1 + exp(-target * self)), then reduces it: 0 = none (elementwise), 1 = mean
(a 0-d tensor; NaN when empty), 2 = sum (a 0-d tensor; 0 when empty).

- `target` broadcasts to the shape of `self` (NumPy rules; PyTorch writes the losses into
  a tensor of self's shape, so `self` is never the one expanded); the unreduced result has
  the shape of `self`. `target` holds 1 or -1.
- dtypes: float16, bfloat16 or float32, the same for both; the result has that dtype.
  PyTorch evaluates it as log1p(exp((-self) * target)) in the input dtype, rounding after
  the product, the exp and the log1p (in float16, exp overflows to inf for arguments above
  about 11.1, and the loss is then inf); a reduction adds the rounded losses in float32
  and rounds the mean or sum once. Half-precision inputs appear here with mean and sum
  reductions.
- Inputs may have any strides; they must not be modified.
- Required: the default overload. Left out: `soft_margin_loss.out`.
"""

import torch

from kgb.operators import Case

VERSION = 1

SIGNATURES = '''
def soft_margin_loss(self: torch.Tensor, target: torch.Tensor, reduction: int = 1) -> torch.Tensor:
    """aten::soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor"""
'''


def _case(name, tag, s1, s2, dtype, reduction=1, transpose=False, seed=0):
    params = dict(s1=s1, s2=s2, dtype=dtype, reduction=reduction, transpose=transpose)
    n = 1
    for s in s1:
        n *= s
    # mean and sum add every element: reduction = the count, capped so that atol
    # (1e-4 x reduction x RMS) stays below the result and a zero answer fails
    red = max(1, min(n, 1024)) if reduction else 1
    return Case(name, tag, params, seed=seed, reduction=red)


CASES = [
    _case("smoke-mean-f32", "smoke", (5, 37), (5, 37), "float32"),
    _case("smoke-none-f32-bcast", "smoke", (4, 33), (33,), "float32", reduction=0, seed=1),
    _case("smoke-sum-bf16", "smoke", (3, 16), (3, 16), "bfloat16", reduction=2, seed=2),
    _case("none-f32", "check", (1000, 999), (1000, 999), "float32", reduction=0),
    _case("mean-f32", "check", (64, 4099), (64, 4099), "float32"),
    _case("sum-f32", "check", (8, 129, 33), (8, 129, 33), "float32", reduction=2),
    _case("mean-f16", "check", (300, 512), (300, 512), "float16"),
    _case("sum-f16", "check", (100, 64), (100, 64), "float16", reduction=2),
    _case("mean-bf16", "check", (64, 1000), (64, 1000), "bfloat16"),
    _case("sum-bf16", "check", (40, 77), (40, 77), "bfloat16", reduction=2),
    _case("broadcast-none", "check", (16, 8, 64), (8, 1), "float32", reduction=0),
    _case("transposed", "check", (300, 257), (300, 257), "float32", reduction=0, transpose=True),
    _case("vector-mean", "check", (70001,), (70001,), "float32"),
    _case("scalars", "check", (), (), "float32", reduction=0),
    _case("empty-mean", "check", (0, 4), (0, 4), "float32"),
    _case("empty-sum", "check", (0, 4), (0, 4), "float16", reduction=2),
    _case("bench-none-f32", "bench", (8192, 8192), (8192, 8192), "float32", reduction=0),
    _case("bench-mean-bf16", "bench", (16384, 4096), (16384, 4096), "bfloat16"),
]


def _draw(shape, transpose, gen):
    if transpose:
        return torch.randn(tuple(reversed(shape)), generator=gen).t()
    return torch.randn(shape, generator=gen)


def make_inputs(case: Case, gen: torch.Generator, device: str) -> dict:
    p = case.params
    dtype = getattr(torch, p["dtype"])
    x = _draw(tuple(p["s1"]), p["transpose"], gen) * 2
    t = torch.where(_draw(tuple(p["s2"]), p["transpose"], gen) > 0, 1.0, -1.0)
    if p["transpose"]:  # torch.where returns a contiguous tensor: keep the transposed layout
        t = t.t().contiguous().t()
    return dict(self=x.to(dtype).to(device), target=t.to(dtype).to(device), reduction=p["reduction"])


def reference(self, target, reduction=1):
    return torch.ops.aten.soft_margin_loss.default(self, target, reduction)
